"""A CrewAI Flow served by ag-ui-crewai's flow adapter, unchanged. Its
methods are plain Python (no LLM, no key): they write a proposal {payee,
amount} and a growing document, and the adapter sends a STATE_SNAPSHOT at
every method's end; the last one streams a chat reply through the adapter's
``copilotkit_stream`` from litellm's ``mock_response`` (a scripted stream:
no network, no key), so the chat text has something to check. No approval:
the adapter's human-in-the-loop needs a feedback provider, out of scope
here. ``STATES`` keeps the flow's own state per thread (the adapter copies
the flow per request; its state id is the thread).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # no network: nothing leaves 127.0.0.1
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import litellm  # noqa: E402
from ag_ui_crewai import add_crewai_flow_fastapi_endpoint, copilotkit_stream  # noqa: E402
from crewai.flow.flow import Flow, listen, start  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from pydantic import BaseModel  # noqa: E402

STATES: Dict[str, Any] = {}
SECTIONS = 5


class Payments(BaseModel):
    seed: int = 1
    proposal: Dict[str, Any] = {}
    document: List[str] = []


def _section(seed: int, i: int) -> str:
    return f"Section {i} (seed {seed}): " + ("terms and conditions of the offsite booking. " * (3 + (seed + i) % 4))


class PaymentsFlow(Flow[Payments]):
    def _record(self) -> None:
        STATES[self.state.id] = self.state.model_dump(exclude={"id"})

    @start()
    def draft(self) -> None:
        seed = self.state.seed
        self.state.proposal = {"payee": f"ACME-{seed}", "amount": 100 + seed}
        self.state.document = [_section(seed, 0)]
        self._record()

    @listen(draft)
    def write(self) -> None:
        self.state.document = self.state.document + [_section(self.state.seed, i) for i in range(1, SECTIONS)]
        self._record()

    @listen(write)
    def revise(self) -> None:
        amount = self.state.proposal["amount"] + 10 * (1 + self.state.seed % 3)
        self.state.proposal = {**self.state.proposal, "amount": amount}
        self.state.document = self.state.document + [f"Revised amount: {amount}"]
        self._record()

    @listen(revise)
    async def reply(self) -> None:
        # A model's streamed reply as a flow streams one, the model being litellm's scripted mock.
        proposal = self.state.proposal
        text = f"I drafted a payment of {proposal['amount']} to {proposal['payee']} (seed {self.state.seed}), " \
               "please review it before anything is paid."
        await copilotkit_stream(await litellm.acompletion(
            model="openai/mock", messages=[{"role": "user", "content": "summarize"}], mock_response=text, stream=True))


def make_app(path: str = "/agent") -> FastAPI:
    app = FastAPI()
    add_crewai_flow_fastapi_endpoint(app, PaymentsFlow(), path, emit_interrupt_outcome=True)
    return app


def framework_state(thread_id: str) -> Any:
    return STATES.get(thread_id)


def effects(thread_id: str) -> int:
    return 0  # no approval in this flow
