"""The transform ledger's public names, as the docs spell them
(``from s2s.ledger import ledger, save, load, verify``); the code is in
``s2s.tools.ledger`` (records) and ``s2s.tools.ledger_verify``."""

from .tools.ledger import (
    KEY_ENV,
    KEY_FILE_ENV,
    SCHEMA,
    JvpOf,
    LedgerError,
    VjpOf,
    canonical,
    decode_tree,
    encode_tree,
    ledger,
    load,
    provenance,
    save,
    sign,
)
from .tools.ledger_verify import verify

__all__ = [
    "ledger", "verify", "sign", "canonical", "save", "load", "provenance",
    "encode_tree", "decode_tree", "LedgerError", "SCHEMA", "KEY_ENV", "KEY_FILE_ENV",
    "JvpOf", "VjpOf",
]
