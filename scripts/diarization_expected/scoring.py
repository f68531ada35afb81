"""pyannote.metrics on the scoring cases: `testdata/scoring/cases/` and `testdata/scoring/expected.json`."""

from pathlib import Path

from .output import package_versions, write_json, write_text
from .scoring_cases import scoring_cases


def load_annotations(path: Path):
    from pyannote.database.util import load_rttm

    # load_rttm (pandas.read_csv) fails on a file without any line: an empty file is no annotation
    if not path.read_text().strip():
        return {}
    return load_rttm(str(path))


def check_parse(text: str, annotations):
    """pandas' float parsing must give the correctly rounded values (those of Rust's str::parse)."""
    from pyannote.core import Segment

    expected = {}
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "SPEAKER":
            start, duration = float(fields[3]), float(fields[4])
            segment = Segment(start, start + duration)
            if segment:
                expected.setdefault(fields[1], set()).add((segment.start, segment.end, fields[7]))
    got = {uri: {(s.start, s.end, label) for s, _, label in a.itertracks(yield_label=True)} for uri, a in annotations.items()}
    got = {uri: v for uri, v in got.items() if v}
    assert got == expected, (got, expected)


def load_uems(path: Path):
    from pyannote.database.util import load_uem

    return load_uem(str(path))


def mapping_is_unique(cooccurrence):
    """Whether the Hungarian mapping (pairs of positive co-occurrence) is the only optimal one:
    forbidding any positive pair of the optimum must lower the optimum."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    if cooccurrence.size == 0:
        return True
    rows, cols = linear_sum_assignment(-cooccurrence)
    best = cooccurrence[rows, cols].sum()
    scale = max(1.0, abs(best))
    for r, c in zip(rows, cols):
        if cooccurrence[r, c] <= 0:
            continue
        forbidden = cooccurrence.copy()
        forbidden[r, c] = -1e9
        rr, cc = linear_sum_assignment(-forbidden)
        if abs(forbidden[rr, cc].sum() - best) <= 1e-12 * scale:
            return False
    return True


def score_file(der_metric, jer_metric, ref, hyp, uem):
    """One file with pyannote.metrics: components, rates, mappings (in the files' own labels)."""
    from pyannote.core.utils.generators import int_generator, string_generator

    der = der_metric(ref, hyp, uem=uem, detailed=True)
    jer = jer_metric(ref, hyp, uem=uem, detailed=True)

    # the same steps as DiarizationErrorRate.compute_components, to report the mapping it uses
    R, H, scored = der_metric.uemify(
        ref, hyp, uem=uem, collar=der_metric.collar, skip_overlap=der_metric.skip_overlap, returns_uem=True
    )
    ref_names = dict(zip(R.labels(), string_generator()))
    hyp_names = dict(zip(H.labels(), int_generator()))
    ref_back = {v: k for k, v in ref_names.items()}
    hyp_back = {v: k for k, v in hyp_names.items()}
    Rs = R.rename_labels(generator="string")
    Hi = H.rename_labels(generator="int")
    der_mapping = der_metric.optimal_mapping(Rs, Hi)  # {hyp int: ref str}
    jer_mapping = jer_metric.optimal_mapping(Hi, Rs)  # {ref str: hyp int}
    cooc = Rs * Hi  # [ref labels, hyp labels]

    # per reference speaker JER, with JaccardErrorRate.compute_components' own formulas
    speakers = {}
    for ref_label in Rs.labels():
        hyp_label = jer_mapping.get(ref_label)
        entry = {"hyp": None if hyp_label is None else hyp_back[hyp_label]}
        if hyp_label is None:
            entry.update(jer=1.0)
        else:
            r = Rs.label_timeline(ref_label)
            h = Hi.label_timeline(hyp_label)
            total = r.union(h).support().duration()
            fa = h.duration() - h.crop(r).duration()
            miss = r.duration() - r.crop(h).duration()
            entry.update(union=total, false_alarm=fa, missed=miss, jer=(fa + miss) / total)
        speakers[ref_back[ref_label]] = entry
    assert abs(sum(s["jer"] for s in speakers.values()) - jer["speaker error"]) < 1e-12

    total = der["total"]

    def rate(x):
        return x / total if total > 0 else None

    return {
        "scored_seconds": scored.duration(),
        "reference_speech": total,
        "correct": der["correct"],
        "missed_speech": der["missed detection"],
        "false_alarm_speech": der["false alarm"],
        "confusion_speech": der["confusion"],
        "der": der["diarization error rate"],
        "miss": rate(der["missed detection"]),
        "false_alarm": rate(der["false alarm"]),
        "confusion": rate(der["confusion"]),
        "der_mapping": {hyp_back[h]: ref_back[r] for h, r in sorted(der_mapping.items(), key=lambda kv: str(hyp_back[kv[0]]))},
        "jer": jer["jaccard error rate"],
        "jer_speaker_count": jer["speaker count"],
        "jer_speaker_error": jer["speaker error"],
        "jer_speakers": speakers,
        "mapping_unique": mapping_is_unique(cooc),
        "cooccurrence": [
            [ref_back[rl], hyp_back[hl], float(cooc[i, j])]
            for i, rl in enumerate(Rs.labels())
            for j, hl in enumerate(Hi.labels())
            if cooc[i, j] > 0
        ],
    }


def overall(der_metric, jer_metric):
    acc = der_metric[:]
    jacc = jer_metric[:]
    total = acc["total"]

    def rate(x):
        return x / total if total > 0 else None

    return {
        "reference_speech": total,
        "correct": acc["correct"],
        "missed_speech": acc["missed detection"],
        "false_alarm_speech": acc["false alarm"],
        "confusion_speech": acc["confusion"],
        "der": abs(der_metric),
        "miss": rate(acc["missed detection"]),
        "false_alarm": rate(acc["false alarm"]),
        "confusion": rate(acc["confusion"]),
        "jer": abs(jer_metric),
        "jer_speaker_count": jacc["speaker count"],
        "jer_speaker_error": jacc["speaker error"],
    }


SETTINGS = [(collar, skip) for collar in (0.0, 0.25, 0.5) for skip in (False, True)]


def make_scoring(root: Path):
    from pyannote.core import Annotation
    from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

    out = root / "testdata" / "scoring"
    case_dir = out / "cases"
    case_dir.mkdir(parents=True, exist_ok=True)
    for old in case_dir.iterdir():
        old.unlink()
    results = []
    for name, description, ref_text, hyp_text, uem_text in scoring_cases():
        ref_path, hyp_path = case_dir / f"{name}.ref.rttm", case_dir / f"{name}.hyp.rttm"
        write_text(ref_path, ref_text)
        write_text(hyp_path, hyp_text)
        uem_path = None
        if uem_text is not None:
            uem_path = case_dir / f"{name}.uem"
            write_text(uem_path, uem_text)
        refs, hyps = load_annotations(ref_path), load_annotations(hyp_path)
        check_parse(ref_text, refs)
        check_parse(hyp_text, hyps)
        uems = load_uems(uem_path) if uem_path else {}
        uris = sorted(set(refs) | set(hyps) | set(uems), key=str)
        settings = []
        for collar, skip in SETTINGS:
            der_metric = DiarizationErrorRate(collar=collar, skip_overlap=skip)
            jer_metric = JaccardErrorRate(collar=collar, skip_overlap=skip)
            files = {}
            for uri in uris:
                ref = refs.get(uri, Annotation(uri=uri))
                hyp = hyps.get(uri, Annotation(uri=uri))
                files[uri] = score_file(der_metric, jer_metric, ref, hyp, uems.get(uri))
            settings.append({"collar": collar, "skip_overlap": skip, "files": files, "overall": overall(der_metric, jer_metric)})
        results.append(
            {
                "name": name,
                "description": description,
                "ref": f"cases/{ref_path.name}",
                "hyp": f"cases/{hyp_path.name}",
                "uem": f"cases/{uem_path.name}" if uem_path else None,
                "files": uris,
                "settings": settings,
            }
        )
    write_json(
        out / "expected.json",
        {
            "generator": "scripts/diarization_expected.py",
            "packages": package_versions(["pyannote.metrics", "pyannote.core", "pyannote.database", "scipy", "numpy", "pandas"]),
            "conventions": {
                "files": "sorted URIs of ref, hyp and uem together; a file absent from one side is an empty annotation there; a file absent from the UEM (or no UEM) is scored on the union of the extents of ref and hyp",
                "seconds": "reference_speech, correct, missed_speech, false_alarm_speech, confusion_speech are durations in seconds, summed over speakers (a region where k reference speakers talk counts k times)",
                "rates": "der = (missed + false_alarm + confusion) / reference_speech, and 0.0 when all are 0, 1.0 when reference_speech is 0 but not the errors (pyannote); miss, false_alarm, confusion = component / reference_speech, null when reference_speech is 0",
                "overall": "components summed over files, then the rates of the sums; jer = sum of per-speaker JER over all files / number of reference speakers over all files (1.0 when there is none)",
                "der_mapping": "hypothesis speaker -> reference speaker (pairs of positive co-occurrence only), after collars/skip_overlap/UEM",
                "jer_speakers": "per reference speaker (after collars/skip_overlap/UEM): mapped hypothesis speaker (null: none) and its JER",
                "mapping_unique": "false when another mapping has the same total co-occurrence (ties: pyannote takes scipy's choice)",
                "cooccurrence": "[ref, hyp, seconds] for the positive entries of the co-occurrence matrix the mapping maximises",
            },
            "cases": results,
        },
    )
    return results
