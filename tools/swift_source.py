"""Reading Swift source for the repository's checks: the code with comments and string literals blanked out.

The checks look for declarations and type names; a name inside a comment or a string is neither, so each check reads
the code through `strip`, which keeps every newline so that line numbers still point at the file.
"""


def strip(source: str) -> str:
    """The code without comments and string literals (a literal becomes `""`, its newlines kept)."""
    out, i, n = [], 0, len(source)
    while i < n:
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * source.count("\n", i, j))
            i = j
        elif source.startswith('"""', i):
            j = source.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append('""' + "\n" * source.count("\n", i, j))
            i = j
        elif source[i] == '"':
            j = i + 1
            while j < n and source[j] != '"' and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            out.append('""')
        else:
            out.append(source[i])
            i += 1
    return "".join(out)
