"""A LiteLLM proxy callback that writes every request's StandardLoggingPayload (success or
failure), one JSON object a line, to $LADDER_LITELLM_LOG: the request log `ladder logs` reads
(docs/logs.md). Enable it in the proxy's config, beside this file:

    litellm_settings:
      callbacks: ladder_log.proxy_handler_instance
"""
import json
import os

from litellm.integrations.custom_logger import CustomLogger


class LadderLog(CustomLogger):
    def _write(self, kwargs):
        payload = kwargs.get("standard_logging_object")
        if payload is not None:
            with open(os.environ.get("LADDER_LITELLM_LOG", "litellm-requests.jsonl"), "a") as f:
                f.write(json.dumps(payload, default=str) + "\n")

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
        self._write(kwargs)


proxy_handler_instance = LadderLog()
