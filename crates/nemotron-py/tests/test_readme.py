"""The README's Python example runs as written (the demo model in place of the Hub id, a bundled recording in place of
`meeting.wav`) and prints the segments that `diarize --format csv` writes."""

import contextlib
import io
import re

from conftest import REPO, SPEECH, run_cli


def test_the_readme_example_prints_the_cli_segments(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    assert len(example.splitlines()) == 5
    code = example.replace('Model.from_pretrained("nvidia/Nemotron-3-Diarization")', "Model.demo()")
    code = code.replace('"meeting.wav"', repr(str(SPEECH)))
    assert code != example and str(SPEECH) in code
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})
    csv = tmp_path / "segments.csv"
    run_cli("diarize", "--demo", "--audio", SPEECH, "--segments", csv)
    rows = [line.split(",") for line in csv.read_text().splitlines()[1:]]
    assert rows, "the demo model finds no segment: the comparison would be empty"
    assert printed.getvalue().splitlines() == [f"{start} {end} {speaker}" for start, end, _, speaker in rows]
