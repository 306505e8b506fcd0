"""This feature's hook: images a tool returns are read, checked and registered, then delivered to the model.

    Agent(client, model, tools, image_input=False, image_fallback="auto", vision=connect("practice-vision"))
    # the same as
    Agent(client, model, tools, hooks=[MediaHook(MediaStore(), image_input=False, image_fallback="auto",
                                                 vision=connect("practice-vision"))])

Every Agent has one (when this folder is there): around each call it looks for images in what the tool
returned (store.py), before each request it keeps image parts where the model can take them, and after
a reply's calls it adds the one user message that carries their images (vision.py).
"""
from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any

from ..concurrency import in_thread
from ..executor import ToolResult, envelope
from ..hooks import Hook, Plan, Proceed, Request, Run
from ..redaction import redact
from .sources import MediaError, MediaPolicy
from .store import Found, Media, MediaStore, find_media
from .vision import CONVERSATION, ImageFallback, Vision, conversation_ids

__all__ = ["LOADING_SLOTS", "MAX_IMAGES", "MediaHook", "hooks_for"]

log = logging.getLogger("mini_framework")
MAX_IMAGES = 16  # images one tool result may return
LOADING_SLOTS = 4  # images read or fetched at the same time, per reply


class MediaHook(Hook):
    """Images from tools: found in return values, loaded within the policy, registered, shown to the model."""

    def __init__(self, store: MediaStore | None = None, *, image_input: bool | None = None,
                 image_fallback: ImageFallback | None = None, vision: Any = None) -> None:
        self.store = store if store is not None else MediaStore()
        self.settings = {"image_input": image_input, "fallback": image_fallback, "describer": vision}
        self.vision: Vision | None = None  # set when attached to an Agent (it depends on the model)
        self.offered: list[Any] = []  # the tools this hook brought to the agent

    def attach(self, agent: Any) -> None:
        self.vision = Vision.for_model(agent.model, self.store, **self.settings)
        self.offered = self.vision.offered_tools()  # image_understand, when the model cannot see
        for extra in self.offered:
            agent.offer(extra)

    def expose(self) -> dict[str, Any]:
        return {"media": self.store, "vision": self.vision}

    async def before_request(self, run: Run, request: Request) -> None:
        if self.vision is None:
            return
        self.vision.prepare(run.state.messages)  # no image part where the model cannot take it, ever again
        if request.messages is not run.state.messages:
            request.messages = list(request.messages)
            self.vision.prepare(request.messages)

    async def around_call(self, plan: Plan, proceed: Proceed) -> ToolResult:
        if plan.tool in self.offered and plan.run is not None and plan.run.agent is not None:
            seen = CONVERSATION.set(conversation_ids(plan.run.state.messages))  # it may look at this
            try:                                                               # conversation's images only
                result = await proceed()
            finally:
                CONVERSATION.reset(seen)
        else:
            result = await proceed()
        if not result.ok or result.value is None:
            return result
        value, found = _find_media(result.value)
        if not found:
            return result
        media, problems = await self._load(found, result.call.name, plan.reply)
        if not media and not problems:
            return result  # an older tool's {"path": ...} that is not an image: plain data
        content, attachments = plan.format(value) if plan.format is not None else (str(value), [])
        lines = [content] if content else []
        lines += [f"[image {m.label()}]" for m in media]
        if problems:
            message = (f"{result.call.name} returned an image that cannot be used: {'; '.join(problems)}. Use an image "
                       "inside the allowed folders or at a public http(s) URL, or tell the user.")
            return ToolResult(result.call, envelope("error", error=message, output="\n".join(lines) or None),
                              ok=False, failure="bad_media", value=result.value, repairs=result.repairs, media=media)
        return ToolResult(result.call, "\n".join(lines), ok=True, value=result.value, repairs=result.repairs,
                          attachments=attachments, media=media)

    async def after_calls(self, run: Run, results: list[ToolResult]) -> None:
        if self.vision is not None:
            await self.vision.deliver(results, run.state.messages)

    async def _load(self, found: list[Found], tool_name: str, reply: dict[str, Any]) -> tuple[list[Media], list[str]]:
        """Read and register the images a tool returned, concurrently: (registered, why others were refused).
        An older tool's {"path": ...} that cannot be read is not an image after all, and no problem."""
        store = self.store
        if len(found) > MAX_IMAGES:
            return [], [f"{len(found)} images in one result, more than {MAX_IMAGES}"]
        budget = store.policy.max_round_bytes
        over = f"the images of this reply's calls add up to more than {budget:,} bytes"
        slots = reply.setdefault("media_slots", asyncio.Semaphore(LOADING_SLOTS))  # shared by the reply's calls
        reply.setdefault("media_bytes", 0)

        def load(item: Found) -> Media | str | None:
            try:
                return store.load(item, tool_name)
            except MediaError as error:
                return redact(str(error)) if item.explicit else None
            except Exception as error:  # a bug of ours: refused, logged, never raised into the run
                log.warning("loading an image from %s failed", tool_name, exc_info=True)
                return f"an image could not be read ({type(error).__name__})" if item.explicit else None

        async def one(item: Found) -> Media | str | None:
            async with slots:  # a few images in memory at a time, and none read past the budget
                if reply["media_bytes"] > budget:
                    return over
                try:  # each fetch has its own deadline; this one also covers a hung name lookup
                    outcome = await asyncio.wait_for(in_thread(partial(load, item)), store.policy.timeout + 5)
                except asyncio.TimeoutError:
                    return "loading the image took too long" if item.explicit else None
                if isinstance(outcome, Media):
                    reply["media_bytes"] += len(outcome.data)
                    if reply["media_bytes"] > budget:  # the results keep their images: memory, too
                        return over
                return outcome

        outcomes = await asyncio.gather(*(one(item) for item in found))
        media = [o for o in outcomes if isinstance(o, Media)]
        problems = list(dict.fromkeys(o for o in outcomes if isinstance(o, str)))
        return media, problems


def _find_media(value: Any) -> tuple[Any, list[Found]]:
    """`find_media`, where a value that breaks the search (a cycle, a hostile __eq__) simply holds no images."""
    try:
        return find_media(value)
    except Exception:
        log.warning("looking for images in a tool result failed; it is sent as it is", exc_info=True)
        return value, []


def hooks_for(agent: Any, *, image_input: bool | None = None, image_fallback: ImageFallback | None = None,
              vision: Any = None, media: MediaPolicy | MediaStore | None = None) -> list[Hook]:
    """The media hook, with the Agent's shorthands (`media=` a MediaPolicy, or a MediaStore to share)."""
    store = media if isinstance(media, MediaStore) else MediaStore(media)
    return [MediaHook(store, image_input=image_input, image_fallback=image_fallback, vision=vision)]
