"""tools/check_docs.py, a step of `make docs`: every public symbol has a doc comment, and every public function,
initializer and subscript outside Generated/ that takes parameters names each of them in its DocC sections, with
`- Returns:` when it returns a value and `- Throws:` when it throws. Checked on small hand-made symbol graphs."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "check_docs.py"
spec = importlib.util.spec_from_file_location("check_docs", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

SOURCES = "file:///home/dev/profirest/Sources/ProfirestAPI"


def text(spelling):
    return {"kind": "text", "spelling": spelling}


def keyword(spelling):
    return {"kind": "keyword", "spelling": spelling}


def symbol(name, doc, *, kind="swift.method", parameters=(), returns="String", effects=(), file="Client/Store.swift",
           line=10, closure_parameter_throws=False):
    """A symbol as dump-symbol-graph writes it, in the parts the check reads. `parameters`: (label, internal name)."""
    uri = f"{SOURCES}/{file}"
    fragments = [keyword("func"), text(" "), {"kind": "identifier", "spelling": name}, text("(")]
    for index, (label, internal) in enumerate(parameters):
        if index:
            fragments.append(text(", "))
        fragments.append({"kind": "externalParam", "spelling": label})
        if internal != label:
            fragments += [text(" "), {"kind": "internalParam", "spelling": internal}]
        if closure_parameter_throws:
            fragments += [text(": () "), keyword("throws"), text(" -> "), {"kind": "typeIdentifier", "spelling": "Int"}]
        else:
            fragments += [text(": "), {"kind": "typeIdentifier", "spelling": "String"}]
    fragments.append(text(")"))
    for effect in effects:
        fragments += [text(" "), keyword(effect)]
    if returns not in ("", "()"):
        fragments += [text(" -> "), {"kind": "typeIdentifier", "spelling": returns}]
    signature_parameters = []
    for label, internal in parameters:
        entry = {"name": internal if label == "_" else label}
        if label not in ("_", internal):
            entry["internalName"] = internal
        signature_parameters.append(entry)
    return {
        "kind": {"identifier": kind, "displayName": "Instance Method"},
        "identifier": {"precise": f"s:{name}", "interfaceLanguage": "swift"},
        "pathComponents": ["Store", name],
        "names": {"title": f"{name}({''.join((label if label != '_' else '_') + ':' for label, _ in parameters)})"},
        "accessLevel": "public",
        "location": {"uri": uri, "position": {"line": line - 1, "character": 4}},
        "docComment": {"uri": uri, "lines": [{"text": line_text} for line_text in doc]},
        "functionSignature": {"parameters": signature_parameters, "returns": [text(returns)] if returns else []},
        "declarationFragments": fragments,
    }


GOOD = symbol("load", [
    "Reads the item stored under `key`.",
    "",
    "- Parameters:",
    "  - key: the item's name.",
    "  - fallback: what to return when there is none;",
    "    may be empty.",
    "- Returns: the stored text, or `fallback`.",
    "- Throws: ``StorageError`` when the file cannot be read.",
    "",
    "```swift",
    "let text = try await store.load(\"token\", or: \"\")",
    "```",
], parameters=[("_", "key"), ("or", "fallback")], effects=["async", "throws"], line=12)

BAD = symbol("save", [
    "Writes `value` under `key`.",
    "",
    "```swift",
    "// - Parameters:",
    "//   - key: not a callout: it is in the example",
    "- Returns: nor is this",
    "```",
], parameters=[("_", "key"), ("value", "value")], effects=["throws"], returns="Bool", line=30)


def graph_dir(tmp_path, *symbols):
    (tmp_path / "ProfirestAPI.symbols.json").write_text(json.dumps({"symbols": list(symbols), "relationships": []}))
    return tmp_path


def run(directory):
    return subprocess.run([sys.executable, str(SCRIPT), str(directory)], capture_output=True, text=True, timeout=60)


def test_a_function_with_every_section_passes(tmp_path):
    assert check.missing_sections(GOOD) == []
    result = run(graph_dir(tmp_path, GOOD))
    assert result.returncode == 0, result.stderr
    assert "every function with parameters outside Generated/ has its DocC sections" in result.stdout


def test_a_function_without_sections_fails_with_its_file_and_line(tmp_path):
    result = run(graph_dir(tmp_path, GOOD, BAD))
    assert result.returncode == 1
    assert "1 public function(s) of ProfirestAPI outside Generated/ without their DocC sections" in result.stderr
    line = next(line for line in result.stderr.splitlines() if "Store.save" in line)
    assert line.strip().startswith("Sources/ProfirestAPI/Client/Store.swift:30: Store.save")
    assert "no `- Parameter` for key, value; no `- Returns:`; no `- Throws:`" in line
    assert "Store.load" not in result.stderr


def test_every_parameter_must_be_named_by_its_internal_name():
    one_missing = symbol("load", ["Reads.", "", "- Parameter key: the name.", "- Returns: the text.",
                                  "- Throws: ``StorageError``."],
                         parameters=[("_", "key"), ("or", "fallback")], effects=["throws"])
    assert check.missing_sections(one_missing) == ["`- Parameter` for fallback"]
    by_label = symbol("load", ["Reads.", "", "- Parameters:", "  - key: the name.", "  - or: the fallback.",
                               "- Returns: the text."], parameters=[("_", "key"), ("or", "fallback")])
    assert check.missing_sections(by_label) == ["`- Parameter` for fallback"]
    singles = symbol("load", ["Reads.", "", "- Parameter key: the name.", "- parameter fallback: the fallback.",
                              "- Returns: the text."], parameters=[("_", "key"), ("or", "fallback")])
    assert check.missing_sections(singles) == []


def test_returns_and_throws_are_asked_only_when_they_apply():
    setter = symbol("set", ["Stores it.", "", "- Parameter value: the text."], parameters=[("_", "value")],
                    returns="()")
    assert check.missing_sections(setter) == []
    initializer = symbol("init", ["Makes one.", "", "- Parameter value: the text."], kind="swift.init",
                         parameters=[("value", "value")], returns="")
    assert check.missing_sections(initializer) == []
    # A closure parameter's `throws` is not the function's own.
    taking_a_throwing_closure = symbol("run", ["Runs it.", "", "- Parameter body: the work.", "- Returns: its result."],
                                       parameters=[("_", "body")], returns="Int", closure_parameter_throws=True)
    assert check.missing_sections(taking_a_throwing_closure) == []
    rethrowing = symbol("run", ["Runs it.", "", "- Parameter body: the work.", "- Returns: its result."],
                        parameters=[("_", "body")], returns="Int", effects=["rethrows"], closure_parameter_throws=True)
    assert check.missing_sections(rethrowing) == ["`- Throws:`"]
    # Nor is the `throws` of a function type it returns: `func handler(for name: String) -> () throws -> Void`.
    returning_a_throwing_function = symbol("handler", ["Makes one.", "", "- Parameter name: the name.",
                                                       "- Returns: the handler."], parameters=[("for", "name")])
    returning_a_throwing_function["declarationFragments"][-3:] = [
        text(") -> () "), keyword("throws"), text(" -> "), {"kind": "typeIdentifier", "spelling": "Void"}]
    assert not check.own_effect_throws(returning_a_throwing_function)
    assert check.missing_sections(returning_a_throwing_function) == []


def test_functions_without_parameters_and_generated_ones_are_not_asked(tmp_path):
    no_parameters = symbol("reload", ["Reloads."], effects=["throws"])
    generated = symbol("listOrders", ["Lists the orders."], parameters=[("restaurantID", "restaurantID")],
                       file="Generated/TypedOperations.swift")
    result = run(graph_dir(tmp_path, no_parameters, generated))
    assert result.returncode == 0, result.stderr


def test_a_protocol_extension_member_is_listed_once_for_all_its_types(tmp_path):
    copies = []
    for type_name in ("OrderStatus", "TabStatus", "EventType"):
        copy = symbol("~=", ["Matches a known case."], kind="swift.func.op", parameters=[("_", "pattern"), ("_", "value")],
                      returns="Bool", file="Values/ProfirestOpenEnum.swift", line=47)
        copy["identifier"]["precise"] += type_name
        copy["pathComponents"] = [type_name, "~=(_:_:)"]
        copies.append(copy)
    result = run(graph_dir(tmp_path, *copies))
    assert result.returncode == 1
    offenders = [line for line in result.stderr.splitlines() if line.startswith("  ")]
    assert len(offenders) == 1
    assert "Sources/ProfirestAPI/Values/ProfirestOpenEnum.swift:47:" in offenders[0]
    assert "(and 2 other conforming type(s))" in offenders[0]


def test_a_symbol_without_any_comment_and_one_without_sections_are_both_listed(tmp_path):
    undocumented = symbol("close", [], line=5)
    undocumented["docComment"] = None
    result = run(graph_dir(tmp_path, undocumented, BAD))
    assert result.returncode == 1
    assert "1 public symbol(s) of ProfirestAPI without a doc comment" in result.stderr
    assert "Sources/ProfirestAPI/Client/Store.swift:5: instance method Store.close" in result.stderr
    assert "Sources/ProfirestAPI/Client/Store.swift:30: Store.save" in result.stderr
