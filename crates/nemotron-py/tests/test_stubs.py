"""The type stubs (`_native.pyi`) name what the extension has: the same classes and functions, and in each class the
same public methods, properties and attributes, with the same parameter names; the segment settings' keywords are
the library's, each taken by the model as the CLI takes its flag."""

import ast
import inspect
import re
from pathlib import Path

import pytest

import nemotron_audio
from conftest import SHORT, TESTDATA, run_cli
from nemotron_audio import _native

STUBS = Path(nemotron_audio.__file__).with_name("_native.pyi")


def public(names):
    return {n for n in names if not n.startswith("_")}


def stub_tree():
    return ast.parse(STUBS.read_text(encoding="utf-8"))


def typed_dicts(tree):
    """The stub's TypedDicts (types of keyword arguments, nothing at runtime): each one's keys, inherited first."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [base.id for base in node.bases if isinstance(base, ast.Name)]
        if "TypedDict" in bases or any(base in found for base in bases):
            keys = [key for base in bases for key in found.get(base, [])]
            found[node.name] = keys + [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]
    return found


def test_the_stubs_are_installed_with_the_package():
    assert STUBS.is_file() and STUBS.with_name("py.typed").is_file()


def test_the_stubs_name_every_class_and_function():
    tree = stub_tree()
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and not node.name.startswith("_")}
    classes -= set(typed_dicts(tree))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    runtime = public(name for name in dir(_native) if not inspect.ismodule(getattr(_native, name)))
    assert classes | functions | {"__version__"} >= runtime - {"__version__"}
    assert classes | functions <= runtime
    assert set(nemotron_audio.__all__) <= runtime | {"__version__"}


def test_each_class_has_what_its_stub_says():
    for node in stub_tree().body:
        if not isinstance(node, ast.ClassDef) or node.name.startswith("_") or not hasattr(_native, node.name):
            continue
        cls = getattr(_native, node.name)
        stubbed, var_keywords = {}, {}
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                stubbed[item.name] = [a.arg for a in item.args.posonlyargs + item.args.args + item.args.kwonlyargs]
                var_keywords[item.name] = [item.args.kwarg.arg] if item.args.kwarg else []
            elif isinstance(item, ast.AnnAssign):
                stubbed[item.target.id] = None
        if issubclass(cls, BaseException):
            continue  # the exceptions' members are BaseException's
        assert public(stubbed) == public(dir(cls)), node.name
        for name, parameters in stubbed.items():
            member = inspect.getattr_static(cls, name)
            if parameters is None or not callable(member) or name.startswith("__"):
                continue
            signature = inspect.signature(getattr(cls, name))
            kinds = {p.name: p.kind for p in signature.parameters.values()}
            names = [p for p, kind in kinds.items() if kind not in (kind.VAR_KEYWORD, kind.VAR_POSITIONAL)]
            names = [p for p in names if p not in ("self", "cls")]
            expected = [p for p in parameters if p not in ("self", "cls")]
            assert names == expected, f"{node.name}.{name}"
            # `**segment_settings: Unpack[SegmentOptions]`: the same name, the keywords typed once (tested below).
            keywords = [p for p, kind in kinds.items() if kind == kind.VAR_KEYWORD]
            assert keywords == var_keywords[name], f"{node.name}.{name}"


# A value each segment setting takes, and the CLI's flag for it.
SAMPLES = {
    "threshold": 0.3,
    "onset": 0.6,
    "offset": 0.4,
    "pad_onset": -0.05,
    "pad_offset": 0.05,
    "min_duration_on": 0.1,
    "min_duration_off": 0.1,
    "postprocessing": TESTDATA / "postprocessing" / "yaml" / "parameters.yaml",
    "max_speakers": 1,
}


def test_each_segment_setting_is_a_keyword_of_the_stubs_and_gives_the_clis_segments(demo):
    # The library's list of the settings, as an unknown keyword's error names them.
    with pytest.raises(TypeError) as raised:
        demo.diarize(SHORT, not_a_setting=1)
    settings = re.search(r"\(the settings: (.*)\)", str(raised.value)).group(1).split(", ")
    keywords = typed_dicts(stub_tree())
    assert keywords["SegmentOptions"] == settings
    assert keywords["StreamSegmentOptions"] == [name for name in settings if name != "max_speakers"]
    assert sorted(SAMPLES) == sorted(settings), "a sample value for each setting"
    for name in settings:
        value = SAMPLES[name]
        expected = run_cli("diarize", "--demo", "--audio", SHORT, f"--{name.replace('_', '-')}", value, "--segments", "-")
        assert demo.diarize(SHORT, **{name: value}).to_rttm() == expected, name
        assert [d.to_rttm() for d in demo.diarize_many([SHORT], **{name: value})] == [expected], name
        if name in keywords["StreamSegmentOptions"]:
            demo.stream(**{name: value}).close()
