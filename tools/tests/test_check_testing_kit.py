"""tools/check_testing_kit.py without compiling: what it takes from the article "Testing your app", and when it refuses."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import check_testing_kit as kit  # noqa: E402

TARGET = '''.testTarget(name: "MyAppTests", dependencies: [
    "MyApp",
    .product(name: "ProfirestTesting", package: "profirest-api-swift"),
]),
'''
TEST = '''import XCTest
final class ATests: XCTestCase {
    func testOne() async throws {}
}
'''


def article(*blocks: tuple[str, str]) -> str:
    return "# Testing your app\n\n" + "".join(f"```{language}\n{code}```\n\ntext\n\n" for language, code in blocks)


def test_takes_the_test_target_and_the_swift_code_verbatim():
    target, source, tests = kit.article_parts(article(("text", TARGET), ("sh", "make\n"), ("swift", TEST)))
    assert target == TARGET.rstrip().rstrip(",")
    assert source == TEST
    assert tests == ["testOne"]


def test_the_repositorys_article_has_its_parts():
    target, source, tests = kit.article_parts(kit.ARTICLE.read_text(encoding="utf-8"))
    assert '"ProfirestTesting"' in target and "ProfirestTestServer()" in source and tests


def test_refuses_an_article_without_a_test_target_or_a_test():
    with pytest.raises(kit.ArticleError, match="starting with .testTarget"):
        kit.article_parts(article(("swift", TEST)))
    with pytest.raises(kit.ArticleError, match="no test method"):
        kit.article_parts(article(("text", TARGET), ("swift", "struct A {}\n")))
