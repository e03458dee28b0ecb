"""render_state_for_prompt / prompt_message: shared state as one escaped,
size-capped data block for an LLM prompt, rendered by the C++ core
(src/facade/prompt_facade.h), so the bytes equal the JS package's.
docs/prompt-rendering.md has the format. Use it instead of pasting
json.dumps(state) into a system prompt."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union, cast

from . import _core
from ._json import MAX_DEPTH, parse, plain
from .errors import failure_error, sync_type_error, sync_value_error
from .types import PromptMessage, PromptRender

_ENGINE_PREFIXES = ("renderStateForPrompt: ", "renderPromptJson: ")


def _options(what: str, **options: Any) -> Dict[str, Any]:
    picked = {name: value for name, value in options.items() if value is not None}
    # Read only with untrusted='auto' (the JS promptOptionsJson rule).
    for name in ("ownership", "userWritten"):
        if name in picked and picked.get("untrusted") != "auto":
            raise sync_type_error("invalid-options", f"{what}: option {name} is read only with untrusted='auto'")
    return picked


def _options_json(picked: Mapping[str, Any], what: str) -> str:
    text, kind, message = _core.to_json(dict(picked), MAX_DEPTH)
    if text is None:
        raise sync_type_error("invalid-options", f"{what}: {message}")
    return text.decode("utf-8") if picked else ""


def _state_bytes(state: Any, what: str) -> bytes:
    # Lone surrogates become U+FFFD, as the JS renderer does: a prompt must not
    # fail because a user's text was cut inside an emoji.
    text, kind, message = _core.to_json(plain(state), MAX_DEPTH, True)
    if text is not None:
        return text
    if kind == "depth":
        raise sync_value_error("limit-exceeded", f"{what}: the state nests deeper than {MAX_DEPTH} levels")
    if kind == "type":
        raise sync_type_error("invalid-argument", f"{what}: the state is not JSON-serializable ({message})")
    raise sync_value_error("invalid-argument", f"{what}: the state is not JSON-serializable ({message})")


def _render(state: Any, picked: Mapping[str, Any], what: str) -> Dict[str, Any]:
    return rendered_parts(_core.render_prompt(_state_bytes(state, what), _options_json(picked, what)), what)


def rendered_parts(parts: str, what: str) -> Dict[str, Any]:
    """The core's render answer (its result's one line of JSON, a newline, then
    the text as it is): {text, bytes, truncated, untrustedPaths, preamble}, or
    the refusal raised."""
    head, _, text = parts.partition("\n")  # the text follows the result's one line of JSON
    result = parse(head)
    if result.get("ok"):
        return {"text": text, "bytes": result["bytes"], "truncated": result["truncated"],
                "untrustedPaths": result["untrustedPaths"], "preamble": result["preamble"]}
    message = str(result.get("message", ""))
    for prefix in _ENGINE_PREFIXES:
        message = message[len(prefix):] if message.startswith(prefix) else message
    if result.get("code") == "invalid-options":
        raise sync_type_error("invalid-options", f"{what}: {message}")
    if result.get("code") == "limit-exceeded":  # the core's "value nests deeper than N levels"
        raise sync_value_error("limit-exceeded", f"{what}: the state {message.removeprefix('value ')}")
    raise failure_error(result, "engine-failed", f"{what}: {message}")


def render_state_for_prompt(state: Any, *, include: Optional[Sequence[str]] = None,
                            exclude: Optional[Sequence[str]] = None,
                            untrusted: Union[Sequence[str], str, None] = None,
                            ownership: Optional[Mapping[str, str]] = None,
                            user_written: Optional[Sequence[str]] = None, max_bytes: Optional[int] = None,
                            max_string_bytes: Optional[int] = None, max_array_items: Optional[int] = None,
                            max_depth: Optional[int] = None, datamark: Optional[str] = None,
                            tag: Optional[str] = None) -> PromptRender:
    """The state as one prompt-safe data block: {text, bytes, truncated:
    [{path, reason, droppedBytes}], untrustedPaths}. The options are the JS
    renderStateForPrompt's, in snake_case; user_written takes
    StateEmitter.provenance() paths (with untrusted='auto')."""
    rendered = _rendered_with_preamble(state, include=include, exclude=exclude, untrusted=untrusted,
                                       ownership=ownership, user_written=user_written, max_bytes=max_bytes,
                                       max_string_bytes=max_string_bytes, max_array_items=max_array_items,
                                       max_depth=max_depth, datamark=datamark, tag=tag)
    del rendered["preamble"]
    return cast(PromptRender, rendered)


def _rendered_with_preamble(state: Any, *, include: Optional[Sequence[str]] = None,
                            exclude: Optional[Sequence[str]] = None, untrusted: Union[Sequence[str], str, None] = None,
                            ownership: Optional[Mapping[str, str]] = None, user_written: Optional[Sequence[str]] = None,
                            max_bytes: Optional[int] = None, max_string_bytes: Optional[int] = None,
                            max_array_items: Optional[int] = None, max_depth: Optional[int] = None,
                            datamark: Optional[str] = None, tag: Optional[str] = None) -> Dict[str, Any]:
    """The core's render of ``state`` with its preamble (one call for prompt_message)."""
    picked = _picked("render_state_for_prompt", include=include, exclude=exclude, untrusted=untrusted,
                     ownership=ownership, user_written=user_written, max_bytes=max_bytes,
                     max_string_bytes=max_string_bytes, max_array_items=max_array_items, max_depth=max_depth,
                     datamark=datamark, tag=tag)
    return _render(state, picked, "render_state_for_prompt")


def _picked(what: str, *, include: Optional[Sequence[str]] = None, exclude: Optional[Sequence[str]] = None,
            untrusted: Union[Sequence[str], str, None] = None, ownership: Optional[Mapping[str, str]] = None,
            user_written: Optional[Sequence[str]] = None, max_bytes: Optional[int] = None,
            max_string_bytes: Optional[int] = None, max_array_items: Optional[int] = None,
            max_depth: Optional[int] = None, datamark: Optional[str] = None, tag: Optional[str] = None) -> Dict[str, Any]:
    """The snake_case options as the core's names, checked."""
    return _options(what, include=_list(include), exclude=_list(exclude),
                    untrusted=untrusted if isinstance(untrusted, str) else _list(untrusted),
                    ownership=ownership, userWritten=_list(user_written), maxBytes=max_bytes,
                    maxStringBytes=max_string_bytes, maxArrayItems=max_array_items, maxDepth=max_depth,
                    datamark=datamark, tag=tag)


def prompt_preamble(tag: Optional[str] = None, datamark: Optional[str] = None) -> str:
    """The one line that introduces a block rendered with this tag and
    datamark: what it is, that it is data, what its markers mean (the core's
    text, as prompt_message and the JS promptMessage write it)."""
    picked = _options("prompt_preamble", tag=tag, datamark=datamark)
    return str(_render({}, picked, "prompt_preamble")["preamble"])


def prompt_message(state: Any, **options: Any) -> PromptMessage:
    """The state as a lower-trust chat message for the agent's model: {role:
    'user', content}: a one-line preamble saying the block is data, then the
    block. Put it in a LangChain HumanMessage(content=...) or return its
    content from a PydanticAI @agent.instructions function."""
    return message_of(_rendered_with_preamble(state, **options))  # one render: the block and its preamble


def message_of(rendered: Mapping[str, Any]) -> PromptMessage:
    """The message of a render: its preamble line, then the block (both the core's)."""
    return {"role": "user", "content": f"{rendered['preamble']}\n{rendered['text']}"}


def render_options_json(what: str, **options: Any) -> str:
    """The options of render_state_for_prompt (snake_case) as the core's JSON text."""
    return _options_json(_picked(what, **options), what)


def _list(value: Optional[Sequence[str]]) -> Optional[List[str]]:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise sync_type_error("invalid-options", "a pointer list option must be a list of JSON Pointers")
    return list(value)
