"""llama-cpp-python's OpenAI-compatible server with mean pooling (compat/run.sh, embeddings).

usage: python compat/llama_embed_server.py [the arguments of python -m llama_cpp.server]

llama-cpp-python's server has no pooling setting, and llama.cpp uses the model's own pooling,
none for a causal model such as SmolLM2: /v1/embeddings then answers one vector per token (a
list of lists per input), which ladder refuses as it should ("one vector per token, not per
input"). This starts the same server with every model created with mean pooling (what
llama.cpp's own server does with --pooling mean), so each input gets one vector.
"""

import runpy

import llama_cpp

_init = llama_cpp.Llama.__init__


def _pooled(self, *args, **kwargs):
    kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    _init(self, *args, **kwargs)


llama_cpp.Llama.__init__ = _pooled
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
