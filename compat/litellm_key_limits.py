"""LiteLLM custom auth for `make compat` (compat/litellm-limits.sh): API keys with a key's limits.

LiteLLM keeps virtual keys (`/key/generate` with `tpm_limit`, `rpm_limit`,
`max_parallel_requests`) in PostgreSQL through Prisma, whose engines Prisma downloads from its own
host at first use (docs/compat.md). Where that cannot be reached, this hook gives the same limits
to fixed keys: it answers LiteLLM's `user_api_key_auth` with a `UserAPIKeyAuth` carrying them, and
LiteLLM's parallel-request limiter (the one that enforces a virtual key's limits) counts them
exactly as it would a key from the database.

COMPAT_KEY_LIMITS is a JSON object: key -> {"tpm_limit": N, "rpm_limit": N, "max_parallel_requests": N}.
"""

import json
import os

from fastapi import Request
from litellm.proxy._types import UserAPIKeyAuth

KEYS = json.loads(os.environ["COMPAT_KEY_LIMITS"])


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    limits = KEYS.get(api_key)
    if limits is None:
        raise Exception("unknown key")
    return UserAPIKeyAuth(api_key=api_key, token=api_key, **limits)
