"""A local text encoder: hashed word and character n-grams (no model download, deterministic).

``φ(text) ∈ R^d``: every word uni/bi-gram and character tri-gram of the lower-cased text is hashed
(``blake2b``, so the result does not depend on ``PYTHONHASHSEED``) into one of ``d`` buckets with a
hashed sign (the "hashing trick", Weinberger et al. 2009); the vector is L2-normalised, so a dot
product of two encodings is their cosine similarity.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

DEFAULT_DIM = 1024
TOKEN_PATTERN = re.compile(r"[a-z_]+|\d+(?:\.\d+)?")


def tokens(text: str) -> list[str]:
    """Lower-cased words and numbers."""
    return TOKEN_PATTERN.findall(text.lower())


def ngrams(text: str) -> list[str]:
    """Word unigrams and bigrams plus character trigrams of each word (prefixed so they cannot collide)."""
    words = tokens(text)
    grams = [f"w:{w}" for w in words] + [f"b:{a} {b}" for a, b in zip(words, words[1:])]
    for word in words:
        padded = f"<{word}>"
        grams.extend(f"c:{padded[k : k + 3]}" for k in range(len(padded) - 2))
    return grams


def _bucket_and_sign(gram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dim, 1.0 if value & 1 else -1.0


def encode_text(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """``φ(text)``: float32 ``[dim]``, unit L2 norm (all zeros for text without tokens)."""
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    vector = np.zeros(dim, np.float32)
    for gram in ngrams(text):
        bucket, sign = _bucket_and_sign(gram, dim)
        vector[bucket] += sign
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def encode_texts(texts: list[str], dim: int = DEFAULT_DIM) -> np.ndarray:
    """``[len(texts), dim]`` encodings."""
    return np.stack([encode_text(t, dim) for t in texts]) if texts else np.zeros((0, dim), np.float32)


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a·b / (|a||b|)`` along the last axis (0 where either vector is zero)."""
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.where(norms > 0, np.sum(a * b, axis=-1) / np.maximum(norms, 1e-12), 0.0)
