"""Keeps the code of the DocC articles honest: every ```swift block is compiled by the tests.

Reads every article of Sources/ProfirestAPI/ProfirestAPI.docc (the landing page too) and writes
Tests/ProfirestAPITests/Docs/ArticleSnippets.swift: each ```swift block becomes one method of
`ArticleSnippetContext`, named after its article and its place in it (`pairingADevice3`). The methods are never
called; `swift build --build-tests` compiling them is the test, so a renamed method or a wrong argument label in an
article fails the build. The context (Tests/ProfirestAPITests/Docs/ArticleSnippetsSupport.swift, written by hand)
gives a block the names it may take as given — `api`, `rid`, `pin`, a `board` to show events on — so a block shows
only what it teaches.

- A block is wrapped as it is, inside an `async throws` method, and must compile without warnings (`make test` builds
  the tests with -warnings-as-errors). A value a block declares at its top level (`let api = …`) and does not use
  again is what the block shows how to make, and the reader goes on to use it: the method ends with `_ = api` so
  that the compiler does not call it unused. Anything else unused is a warning, as in an app.
- The compiler reports an error in a block at its line in the article (`#sourceLocation`), so a broken example
  names PairingADevice.md:32, not a line of the generated file.
- `import X` lines at the top of a block move to the top of the file. A module other than Foundation and
  ProfirestAPI is imported under `#if canImport(X)`, and the block is compiled only where it exists (OSLog: Apple
  platforms). A block that uses a declaration of the library that exists on some platforms only (PLATFORM_ONLY:
  `KeychainTokenStorage`) is compiled only there.
- A block that only declares — its top-level lines are types, functions, their comments and attributes — is not
  wrapped in a method: its declarations become members of `ArticleSnippetContext` (an `extension` goes to the file's
  top level), so the blocks after it, in any article, can use them. The test support's tests may run such a block
  (Docs/ArticleSnippetsTests.swift runs the testing article's examples).
- Code that is deliberately not Swift to compile takes another fence language: ```sh, ```json, ```text.

The testing kit's catalog (Sources/ProfirestTesting/ProfirestTesting.docc) is written differently, to
Tests/ProfirestTestingTests/ArticleSnippets.swift: its examples are whole test files (imports, a view model, an
XCTestCase), so each block goes to the file's top level as it is, its imports gathered at the top; XCTest then runs
its tests, and `make testing-kit-test` runs the same blocks in a package outside the repository. A block there must
only declare.

Usage:
  python3 tools/article_snippets.py           write the file (only when it changes); `make docs` and `make generate`
  python3 tools/article_snippets.py --check   exit 1 when the file is not what the articles give (`make test`)
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "Sources/ProfirestAPI/ProfirestAPI.docc"
OUTPUT = ROOT / "Tests/ProfirestAPITests/Docs/ArticleSnippets.swift"
KIT_CATALOG = ROOT / "Sources/ProfirestTesting/ProfirestTesting.docc"
KIT_OUTPUT = ROOT / "Tests/ProfirestTestingTests/ArticleSnippets.swift"
ALWAYS_IMPORTED = {"Foundation", "ProfirestAPI"}
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>[^`]*)$")
IMPORT = re.compile(r"^import\s+(?P<module>[A-Za-z_][A-Za-z0-9_]*)\s*(//.*)?$")
# A top-level `let name` / `var name` of a block (not a pattern such as `let (a, b)`).
DECLARATION = re.compile(r"^(?:let|var)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b")
# A top-level line of a block that only declares: a declaration, its doc comment or attribute, or a closing brace.
DECLARATION_LINE = re.compile(
    r"^(//|@|\}|((public|internal|private|fileprivate)\s+)?((final|nonisolated)\s+)?"
    r"(struct|class|actor|enum|protocol|func|typealias|extension)\b)")
# Declarations of the library that exist on some platforms only, and the condition under which they do.
PLATFORM_ONLY = {"KeychainTokenStorage": "canImport(Security)"}


class Block:
    def __init__(self, article: str, line: int, lines: list[str]):
        self.article = article
        self.line = line
        self.imports: list[str] = []
        body = list(lines)
        while body and (IMPORT.match(body[0].strip()) or not body[0].strip()):
            match = IMPORT.match(body[0].strip())
            if match and match["module"] not in self.imports:
                self.imports.append(match["module"])
            body.pop(0)
            self.line += 1
        while body and not body[-1].strip():
            body.pop()
        self.body = body

    @property
    def conditions(self) -> list[str]:
        """What the block needs to compile: `canImport(X)` for its imports and the platform-only names it uses."""
        found = [f"canImport({module})" for module in self.imports if module not in ALWAYS_IMPORTED]
        text = "\n".join(self.body)
        for name, condition in PLATFORM_ONLY.items():
            if re.search(rf"\b{name}\b", text) and condition not in found:
                found.append(condition)
        return found

    @property
    def declares_only(self) -> bool:
        top = [line for line in self.body if line.strip() and not line[0].isspace()]
        return bool(top) and all(DECLARATION_LINE.match(line) for line in top)

    @property
    def extends(self) -> bool:
        return any(re.match(r"^((public|internal)\s+)?extension\b", line) for line in self.body)

    @property
    def unused(self) -> list[str]:
        """The names the block declares at its top level and never mentions again, in order."""
        # Without comments and string literals: a name mentioned only there is still unused. (A use inside an
        # interpolation is missed too, which costs only a needless `_ =`.)
        text = "\n".join(re.sub(r"//.*$", "", line) for line in self.body)
        text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
        names = []
        for line in self.body:
            match = DECLARATION.match(line)
            if match and match["name"] not in names and len(re.findall(rf"\b{match['name']}\b", text)) == 1:
                names.append(match["name"])
        return names


def swift_blocks(path: Path) -> list[Block]:
    """The ```swift blocks of one article, in order, with the line each starts on (1-based, its first code line)."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent = len(opening["indent"])
        language = (opening["info"].strip().split() or [""])[0].split(",")[0].lower()
        start = index + 1
        index = start
        while index < len(lines) and not re.match(r"^\s*```\s*$", lines[index]):
            index += 1
        if index >= len(lines):
            raise SystemExit(f"{path.relative_to(ROOT)}:{start}: a code block that is never closed")
        if language == "swift":
            code = [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines[start:index]]
            blocks.append(Block(path.name, start + 1, code))
        index += 1
    return blocks


def source_location(block: Block, catalog: Path = CATALOG) -> str:
    """Makes the compiler report a line of the block at its line in the article, not in the generated file."""
    return f'#sourceLocation(file: "{catalog.relative_to(ROOT) / block.article}", line: {block.line})'


def method_name(article: str, number: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9]", "", Path(article).stem)
    return stem[:1].lower() + stem[1:] + str(number)


def render(articles: list[Path]) -> tuple[str, int]:
    per_article = [(path, swift_blocks(path)) for path in articles]
    modules = []
    for _, blocks in per_article:
        for block in blocks:
            for module in block.imports:
                if module not in ALWAYS_IMPORTED and module not in modules:
                    modules.append(module)
    out = [
        "// generated — do not edit: tools/article_snippets.py writes it from the ```swift blocks of",
        "// Sources/ProfirestAPI/ProfirestAPI.docc/*.md (`make docs` or `make generate`); `make test` fails when it is stale.",
        "//",
        "// Each block is a method of ArticleSnippetContext (Docs/ArticleSnippetsSupport.swift), or its members when it only",
        "// declares. Compiling them against the public API is the test; only the testing article's examples are also run",
        "// (ArticleSnippetsTests). #sourceLocation makes the compiler report a line of a block at its line in the article.",
        "import Foundation",
        "#if canImport(FoundationNetworking)",
        "import FoundationNetworking",
        "#endif",
        "import ProfirestAPI  // not @testable: the articles show the public API only",
    ]
    for module in modules:
        out += [f"#if canImport({module})", f"import {module}", "#endif"]
    out += ["", "extension ArticleSnippetContext {"]
    first = True
    count = 0
    top_level: list[tuple[Path, Block, list[str]]] = []
    for path, blocks in per_article:
        if not blocks:
            continue
        if not first:
            out.append("")
        first = False
        out.append(f"    // MARK: {path.name}")
        for number, block in enumerate(blocks, start=1):
            out.append("")
            count += 1
            conditions = block.conditions
            if block.declares_only and block.extends:
                top_level.append((path, block, conditions))
                out.append(f"    // {path.name}, line {block.line}: at the top level of this file, below")
                continue
            if conditions:
                out.append("    #if " + " && ".join(conditions))
            out.append(f"    // {path.name}, line {block.line}")
            if block.declares_only:
                out.append(source_location(block))
                out += [("    " + line).rstrip() for line in block.body]
                out.append("#sourceLocation()")
            else:
                out.append(f"    func {method_name(path.name, number)}() async throws {{")
                out.append(source_location(block))
                out += [("        " + line).rstrip() for line in block.body]
                out.append("#sourceLocation()")
                names = block.unused
                if names:
                    out.append("        _ = " + (names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"))
                out.append("    }")
            if conditions:
                out.append("    #endif")
    out.append("}")
    for path, block, conditions in top_level:
        out.append("")
        if conditions:
            out.append("#if " + " && ".join(conditions))
        out.append(f"// {path.name}, line {block.line}")
        out.append(source_location(block))
        out += [line.rstrip() for line in block.body]
        out.append("#sourceLocation()")
        if conditions:
            out.append("#endif")
    return "\n".join(out) + "\n", count


def render_top_level(articles: list[Path]) -> tuple[str, int]:
    """The testing kit's articles: every block at the file's top level, as it is (whole test files)."""
    blocks = [block for path in articles for block in swift_blocks(path)]
    modules: list[str] = []
    for block in blocks:
        if not block.declares_only:
            raise SystemExit(f"{(KIT_CATALOG / block.article).relative_to(ROOT)}:{block.line}: a block of the testing "
                             "kit's articles must only declare (it is a test file's code)")
        modules += [module for module in block.imports if module not in modules]
    out = [
        "// generated — do not edit: tools/article_snippets.py writes it from the ```swift blocks of",
        "// Sources/ProfirestTesting/ProfirestTesting.docc/*.md (`make docs` or `make generate`); `make test` fails when it",
        "// is stale. Each block is at the top level as the article shows it, so XCTest runs its tests; `make",
        "// testing-kit-test` runs the same blocks in a package outside the repository.",
    ]
    out += [f"import {module}" for module in modules]
    for block in blocks:
        out += ["", f"// {block.article}, line {block.line}", source_location(block, KIT_CATALOG)]
        out += [line.rstrip() for line in block.body]
        out.append("#sourceLocation()")
    return "\n".join(out) + "\n", len(blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the generated file is stale")
    args = parser.parse_args()
    stale = 0
    for catalog, output, renderer in ((CATALOG, OUTPUT, render), (KIT_CATALOG, KIT_OUTPUT, render_top_level)):
        articles = sorted(catalog.glob("*.md"))
        text, count = renderer(articles)
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if args.check:
            if current != text:
                print(f"article_snippets: {output.relative_to(ROOT)} is not what the articles give; "
                      "run `make docs` (or `python3 tools/article_snippets.py`) and commit it", file=sys.stderr)
                stale += 1
            else:
                print(f"article_snippets: {count} swift blocks of {len(articles)} articles, "
                      f"{output.relative_to(ROOT)} up to date")
            continue
        if current != text:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
            print(f"article_snippets: wrote {output.relative_to(ROOT)} ({count} swift blocks of {len(articles)} articles)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
