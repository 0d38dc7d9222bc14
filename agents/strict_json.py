"""JSON read strictly: an object that names a key twice is an error, not the last value
silently winning (``json.loads`` keeps the last). The checkpoint reader and the web API
read their JSON through here."""

from __future__ import annotations

import json


class DuplicateKeyError(ValueError):
    """A JSON object names a key more than once; ``keys`` lists them."""

    def __init__(self, keys: list):
        self.keys = keys
        super().__init__(f"duplicate key(s) {', '.join(map(repr, keys))}: each key may appear once")


def no_duplicate_keys(pairs):
    """``object_pairs_hook`` for ``json.loads``: a dict, or ``DuplicateKeyError``."""
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise DuplicateKeyError(dup)
    return dict(pairs)


def loads(text):
    """``json.loads`` that refuses duplicate keys (``DuplicateKeyError``)."""
    return json.loads(text, object_pairs_hook=no_duplicate_keys)
