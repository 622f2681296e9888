"""Write docs/errors.md (the error catalogue, tests/error_catalogue.py),
docs/sharp-bits.md (tests/test_sharp_bits.py: every value from s2s and from JAX) and
docs/comparison.md's API table (tests/test_api_table.py: each entry called).

    python tools/errors_doc.py          # rewrite both
    python tools/errors_doc.py --check  # exit 1 if either is stale

tests/test_error_catalogue.py::test_docs_errors_md_is_current,
tests/test_sharp_bits.py::test_page_is_current and
tests/test_api_table.py::test_the_comparison_page_is_current fail when a file differs
from what this writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
os.chdir(ROOT / "tests")


def main(argv: list[str]) -> int:
    import test_api_table as A  # noqa: E402
    import test_error_catalogue as T  # noqa: E402 - needs the paths above
    import test_sharp_bits as S  # noqa: E402

    pages = {T.DOC: T._doc_text(), S.PAGE: S.render(S.outcomes()), A.PAGE: A.page_text()}
    if "--check" in argv:
        stale = [p for p, t in pages.items() if not p.exists() or p.read_text() != t]
        return 1 if stale else 0
    for path, text in pages.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
