"""tools/swift_source.py: what the checks read of a Swift file — comments and literals gone, lines where they were."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from swift_source import strip  # noqa: E402


def test_comments_and_strings_are_blanked_and_lines_kept():
    source = (
        "let a = \"public struct InString\" // public struct InComment\n"
        "/* public class\n   InBlock */ struct Kept {}\n"
        "let b = \"\"\"\n  public enum InMultiline\n  \"\"\"\n"
        "let c = \"escaped \\\" quote struct Hidden\"; struct After {}\n"
    )
    code = strip(source)
    assert code.count("\n") == source.count("\n")
    for hidden in ("InString", "InComment", "InBlock", "InMultiline", "Hidden"):
        assert hidden not in code
    lines = code.split("\n")
    assert "struct Kept" in lines[2]
    assert "struct After" in lines[6]


def test_an_unterminated_comment_or_literal_ends_the_code():
    assert strip("struct A {}\n/* open").startswith("struct A {}")
    assert "B" not in strip('let x = """\nstruct B')
