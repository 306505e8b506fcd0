"""Functions (a feature): `@llm_function`, a Python function whose docstring is the prompt and whose return
annotation is the answer, validated (in the spirit of SimpleLLMFunc, https://github.com/NiJingzhe/SimpleLLMFunc).

    prompt.py      the docstring with the call's arguments filled in
    shape.py       the return annotation as a JSON schema, and a reply checked against it
    decorator.py   the decorator: structured output, a bounded retry, a fallback when it is refused

Needs: the core; the strict feature (mini_framework/strict/) for strict schemas, if it is there.
"""
from .decorator import Answer, LLMFunctionError, llm_function, next_mode, refused_format
from .shape import MODES, Invalid, Shape, shape_of

__all__ = ["Answer", "Invalid", "LLMFunctionError", "MODES", "Shape", "llm_function", "next_mode", "refused_format",
           "shape_of"]
