"""Write docs/errors.md from the error catalogue (tests/error_catalogue.py).

    python tools/errors_doc.py          # rewrite docs/errors.md
    python tools/errors_doc.py --check  # exit 1 if it is stale

tests/test_error_catalogue.py::test_docs_errors_md_is_current fails when the file
differs from what this writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
os.chdir(ROOT / "tests")


def main(argv: list[str]) -> int:
    import test_error_catalogue as T  # noqa: E402 - needs the paths above

    text = T._doc_text()
    if "--check" in argv:
        return 0 if T.DOC.exists() and T.DOC.read_text() == text else 1
    T.DOC.write_text(text)
    print(f"wrote {T.DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
