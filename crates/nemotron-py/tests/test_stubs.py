"""The type stubs (`_native.pyi`) name what the extension has: the same classes and functions, and in each class the
same public methods, properties and attributes, with the same parameter names."""

import ast
import inspect
from pathlib import Path

import nemotron_audio
from nemotron_audio import _native

STUBS = Path(nemotron_audio.__file__).with_name("_native.pyi")


def public(names):
    return {n for n in names if not n.startswith("_")}


def stub_tree():
    return ast.parse(STUBS.read_text(encoding="utf-8"))


def test_the_stubs_are_installed_with_the_package():
    assert STUBS.is_file() and STUBS.with_name("py.typed").is_file()


def test_the_stubs_name_every_class_and_function():
    tree = stub_tree()
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef) and not node.name.startswith("_")}
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
        stubbed = {}
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                stubbed[item.name] = [a.arg for a in item.args.posonlyargs + item.args.args + item.args.kwonlyargs]
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
            if inspect.Parameter.VAR_KEYWORD in kinds.values():
                # `**segment_settings`: the stub spells the keywords out after the named parameters.
                expected = expected[: len(names)]
            assert names == expected, f"{node.name}.{name}"
