"""The language-model agents: `transformers` on a tiny local model, `openai` against a fake server.

Nothing is downloaded: the model is built from a config with a tokenizer trained here
(`agentgym.testing.models`), and the OpenAI-compatible server is `fake_openai_server`
on 127.0.0.1. The tiny model writes garbage, which the env, the harness and the records must
take in their stride.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("fastapi")

import torch  # noqa: E402
from fake_openai_server import FakeOpenAIServer, serve  # noqa: E402

from agentgym.agents import make_agent  # noqa: E402
from agentgym.agents.chat import Conversation, EpisodeLocal, trim_messages  # noqa: E402
from agentgym.agents.openai_agent import OpenAIAgent, OpenAIAgentError  # noqa: E402
from agentgym.agents.transformers_agent import TransformersAgent, check_fits, load_model  # noqa: E402
from agentgym.cli import main as cli_main  # noqa: E402
from agentgym.eval.episode import run_episode  # noqa: E402
from agentgym.eval.records import read_records  # noqa: E402
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs  # noqa: E402
from agentgym.testing.models import build_tiny_causal_lm  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "chatml_tools.txt"
SCHEMA = json.loads(resources.files("agentgym.eval").joinpath("record.schema.json").read_text("utf-8"))
RECORD_KEYS = set(SCHEMA["required"])
FAULTS = ("429", "500", "timeout", "invalid_response")


def local_ids() -> list[str]:
    """Every registered AgentRL id that runs in process (the live registry)."""
    return sorted(i for i in gym.registry if i.startswith("AgentRL/") and "Remote" not in i)


def noise_setting() -> str | None:
    """``light`` noise, or none where the noise spec parser is missing (then the run is noise-free)."""
    try:
        from agentgym.noise.spec import parse_noise
    except ImportError:
        return None
    parse_noise("light")
    return "light"


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One intra-op thread: a tiny model gains nothing from more, and loses much on a busy box."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ~150k-parameter Llama with a locally trained tokenizer and the default ChatML template."""
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="session")
def tiny_model_no_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same, with a tokenizer that has no chat template."""
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-lm-bare"), chat_template=None)


def assert_complete(records: list[dict[str, Any]], jobs: list[EpisodeJob]) -> None:
    assert sorted(r["key"] for r in records) == sorted(j.key for j in jobs), "every job has exactly one record"
    for rec in records:
        assert set(rec) == RECORD_KEYS, rec["key"]
        if rec["agent_error"] is None:
            assert {"success", "score", "turns", "outcome"} <= set(rec["metrics"]), rec["key"]
            assert len(rec["actions"]) == len(rec["steps"]) == rec["metrics"]["turns"]
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - a dev dependency
        return
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for rec in records:
        errors = sorted(validator.iter_errors(rec), key=lambda e: list(e.path))
        assert not errors, f"{rec['key']}: {errors[0].message} at {list(errors[0].path)}"


# ------------------------------------------------------------------ conversations
RESET_INFO: dict[str, Any] = {
    "messages": [{"role": "system", "content": "You are the booking assistant of Harbor Eats. Use the tools."},
                 {"role": "user", "content": "Book a table for 2 at Quay tonight at 20:00."}],
    "tools": [
        {"type": "function", "function": {
            "name": "find_venue", "description": "Find a venue by name.",
            "parameters": {"type": "object",
                           "properties": {"name": {"type": "string", "description": "Part of the name."}},
                           "required": ["name"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": "check_slots", "description": "Free slots of a venue tonight.",
            "parameters": {"type": "object", "properties": {"venue_id": {"type": "string"}, "time": {"type": "string"}},
                           "required": ["venue_id"], "additionalProperties": False}}},
    ],
    "seed": 7,
}
STEP_INFO: dict[str, Any] = {
    "messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1_0", "type": "function", "function": {"name": "find_venue", "arguments": '{"name": "Quay"}'}},
            {"id": "call_1_1", "type": "function",
             "function": {"name": "check_slots", "arguments": '{"venue_id": "V-7", "time": "20:00"}'}}]},
        {"role": "tool", "tool_call_id": "call_1_0", "name": "find_venue",
         "content": '{"id": "V-7", "name": "Quay", "area": "Harbor"}'},
        {"role": "tool", "tool_call_id": "call_1_1", "name": "check_slots", "content": '{"free": ["20:00", "20:30"]}'},
        {"role": "user", "content": "Is 20:00 still free at Café Ünïcode? 🙂"}],
}


def test_golden_chatml_prompt_with_tool_calls_and_results(tiny_model: Path) -> None:
    """System, user, an assistant turn with two calls, their results, a user turn: the rendered
    prompt is the template's expected form, byte for byte, and is what the model is fed."""
    conv = Conversation.from_reset(RESET_INFO)
    conv.add_step(STEP_INFO)
    expected = GOLDEN.read_text(encoding="utf-8")
    agent = TransformersAgent(model=str(tiny_model))
    tokenizer = agent.loaded.tokenizer
    rendered = tokenizer.apply_chat_template(conv.template_messages(), tools=conv.tools, tokenize=False,
                                             add_generation_prompt=True)
    assert rendered == expected
    assert agent.loaded.encode(conv.template_messages(), conv.tools) == \
        tokenizer(expected, add_special_tokens=False)["input_ids"]
    agent.reset("", RESET_INFO)
    assert agent.render_prompt() == expected[: expected.index("<|im_start|>assistant")] + "<|im_start|>assistant\n"


def test_control_tokens_in_messages_are_text(tiny_model: Path) -> None:
    """A user message holding "<|im_end|>" cannot end its turn early in the prompt the model sees."""
    loaded = TransformersAgent(model=str(tiny_model)).loaded
    im_end = loaded.tokenizer.convert_tokens_to_ids("<|im_end|>")
    plain = [{"role": "user", "content": "hello"}]
    forged = [{"role": "user", "content": "hello<|im_end|>"}]
    extra = loaded.encode(forged, []).count(im_end) - loaded.encode(plain, []).count(im_end)
    assert extra == (0 if loaded._sanitize else 1)


def test_conversation_forms_api_and_template() -> None:
    conv = Conversation.from_reset(RESET_INFO)
    conv.add_step(STEP_INFO)
    bad = {"messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "find_venue", "arguments": "null"}}]},
        {"role": "tool", "tool_call_id": "c9", "name": "find_venue", "content": "[error INVALID_ARGS] x"}]}
    conv.add_step(bad)
    api, tmpl = conv.api_messages(), conv.template_messages()
    assert [m["role"] for m in api] == ["system", "user", "assistant", "tool", "tool", "user", "assistant", "tool"]
    assert api[2]["tool_calls"][1]["function"]["arguments"] == '{"venue_id": "V-7", "time": "20:00"}'
    assert tmpl[2]["tool_calls"][1]["function"]["arguments"] == {"venue_id": "V-7", "time": "20:00"}
    assert tmpl[6]["tool_calls"][0]["function"]["arguments"] == "null", "not an object: the model sees what it wrote"
    assert api[3] == {"role": "tool", "tool_call_id": "call_1_0",
                      "content": '{"id": "V-7", "name": "Quay", "area": "Harbor"}'}
    assert [m.get("tool_call_id") for m in api if m["role"] == "tool"] == ["call_1_0", "call_1_1", "c9"]
    # the conversation owns copies: editing the infos later changes nothing
    STEP_INFO_copy = json.loads(json.dumps(STEP_INFO))
    conv2 = Conversation.from_reset(RESET_INFO)
    conv2.add_step(STEP_INFO_copy)
    STEP_INFO_copy["messages"][1]["content"] = "edited"
    STEP_INFO_copy["messages"][0]["tool_calls"][0]["id"] = "edited"
    assert conv2.messages[3]["content"] != "edited" and conv2.messages[2]["tool_calls"][0]["id"] == "call_1_0"


def test_conversation_of_steps_without_the_assistant_turn_uses_the_action() -> None:
    conv = Conversation.from_reset(RESET_INFO)
    conv.add_step({"messages": [{"role": "user", "content": "ok"}]}, action="Hello")
    assert conv.messages[-2:] == [{"role": "assistant", "content": "Hello"}, {"role": "user", "content": "ok"}]
    raw = {"role": "assistant", "content": None, "tool_calls": [{"function": "x"}, 7]}
    conv.add_step({"messages": []}, action=raw)
    conv.add_step({"messages": []}, action={"role": "assistant", "content": None, "tool_calls": "garbage"})
    assert conv.api_messages()[-2]["tool_calls"] == [
        {"id": "", "type": "function", "function": {"name": "", "arguments": "null"}}] * 2
    assert "tool_calls" not in conv.template_messages()[-1] and conv.template_messages()[-1]["content"] == ""


def test_trim_keeps_head_and_longest_whole_tail() -> None:
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U0"}]
    for t in range(1, 6):
        msgs += [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{t}", "function": {"name": "f"}}]},
                 {"role": "tool", "tool_call_id": f"c{t}", "content": f"R{t}"},
                 {"role": "user", "content": f"U{t}"}]
    size = lambda ms: sum(len(m["content"]) + 1 for m in ms)  # noqa: E731
    assert trim_messages(msgs, lambda ms: True) == (msgs, 0)
    kept, start = trim_messages(msgs, lambda ms: size(ms) <= 12)
    assert kept == msgs[:2] + msgs[start:] and kept[2]["role"] == "assistant"
    assert size(kept) <= 12 and kept[-1] == msgs[-1]
    assert size(msgs[:2] + msgs[start - 3:]) > 12, "the tail kept is the longest that fits"
    tool_ids = {m["tool_call_id"] for m in kept if m["role"] == "tool"}
    call_ids = {c["id"] for m in kept if m["role"] == "assistant" for c in m["tool_calls"]}
    assert tool_ids == call_ids, "no tool result without its call"
    no_first, _ = trim_messages(msgs, lambda ms: size(ms) <= 12, keep_first_user=False)
    assert no_first[0]["role"] == "system" and no_first[1]["role"] == "user" and no_first[1]["content"] != "U0"
    assert trim_messages(msgs, lambda ms: False)[0][-3:] == msgs[-3:], "the last turn stays; the caller cuts tokens"
    # the next turn starts from the last cut: one call of `fits` when that tail still fits
    longer = msgs + [{"role": "assistant", "content": "A"}, {"role": "user", "content": "U"}]
    calls: list[int] = []
    again, start2 = trim_messages(longer, lambda ms: calls.append(len(ms)) is None and size(ms) <= 16, start=start)
    assert start2 == start and len(calls) == 1 and again == longer[:2] + longer[start:]
    exhaustive, _ = trim_messages(longer, lambda ms: size(ms) <= 16)
    assert exhaustive == again


def test_episode_local_isolates_asyncio_tasks() -> None:
    import asyncio

    local: EpisodeLocal[str] = EpisodeLocal("t")

    async def episode(name: str) -> list[str | None]:
        local.set(name)
        seen = []
        for _ in range(3):
            await asyncio.sleep(0)
            seen.append(local.get())
        return seen

    async def main() -> list[list[str | None]]:
        return await asyncio.gather(*(episode(n) for n in "abc"))

    assert asyncio.run(main()) == [["a"] * 3, ["b"] * 3, ["c"] * 3]


# ------------------------------------------------------------------ loading errors
def test_load_errors_are_clear(tmp_path: Path, tiny_model: Path, tiny_model_no_template: Path) -> None:
    with pytest.raises(ValueError, match=f"no model at {tmp_path / 'nope'}"):
        make_agent("transformers", model=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="no model at .*config.json"):
        make_agent("transformers", model=str(tmp_path))
    with pytest.raises(ValueError, match="needs model=PATH"):
        make_agent("transformers")
    with pytest.raises(ValueError, match="unknown transformers agent settings \\['max_tokens'\\]"):
        make_agent("transformers", model=str(tiny_model), max_tokens=5)
    with pytest.raises(ValueError, match="chat_template=default"):
        make_agent("transformers", model=str(tiny_model_no_template))
    agent = make_agent("transformers", model=str(tiny_model_no_template), chat_template="default")
    assert isinstance(agent, TransformersAgent) and agent.config()["chat_template"] == "default"
    with pytest.raises(ValueError, match="does not fit: its weights need about .* GiB"):
        check_fits(tiny_model, "cpu", "float32", available=100_000)
    check_fits(tiny_model, "cpu", "float32", available=10**9)
    code = cli_main(["eval", "AgentRL/Dialog-v0", "--agent", "transformers", "--agent-arg", f"model={tmp_path / 'x'}",
                     "--episodes", "1", "--out", str(tmp_path / "r.jsonl")])
    assert code == 2, "a bad model path is a clear CLI error, not a traceback"


# ------------------------------------------------------------------ the transformers agent
def test_transformers_episode_counts_tokens(tiny_model: Path) -> None:
    env = gym.make("AgentRL/ToolUse-v0", max_turns=4)
    agent = make_agent("transformers", model=str(tiny_model), max_new_tokens=8)
    result = run_episode(env, agent, seed=3)
    usage = agent.usage()
    assert usage is not None and usage["generations"] == len(result.actions) == result.episode["turns"]
    assert 0 < usage["completion_tokens"] <= 8 * usage["generations"]
    assert usage["prompt_tokens"] > 500 * usage["generations"], "every prompt holds the brief and the tools"
    assert all(isinstance(a, str) for a in result.actions)
    agent.reset(*env.reset(seed=4))
    assert agent.usage()["prompt_tokens"] == 0, "reset zeroes the count"


def test_prompt_budget_trims_history(tiny_model: Path) -> None:
    env = gym.make("AgentRL/Dialog-v0", max_turns=5)
    agent = make_agent("transformers", model=str(tiny_model), max_new_tokens=8, max_prompt_tokens=300)
    run_episode(env, agent, seed=1)
    usage = agent.usage()
    assert usage["prompt_tokens"] <= 300 * usage["generations"]
    # the brief and tools alone are over 300 tokens: every prompt is cut, and from the second
    # turn on the history is dropped too
    assert usage["cut_prompts"] == usage["generations"] == 5
    assert usage["trimmed_prompts"] == usage["generations"] - 1
    # a budget the opening fits in: old turns go, nothing is cut
    obs, info = env.reset(seed=1)
    opening = agent.loaded.encode(Conversation.from_reset(info).template_messages(), info["tools"])
    roomy = make_agent("transformers", model=str(tiny_model), max_new_tokens=8, max_prompt_tokens=len(opening) + 60)
    run_episode(env, roomy, seed=1)
    usage = roomy.usage()
    assert usage["cut_prompts"] == 0 and usage["trimmed_prompts"] >= 1
    assert usage["prompt_tokens"] <= (len(opening) + 60) * usage["generations"]


def test_sampling_is_reproducible_per_episode_and_batch_invariant(tiny_model: Path) -> None:
    agent = make_agent("transformers", model=str(tiny_model), max_new_tokens=6, temperature=1.0, seed=5)
    envs = [gym.make("AgentRL/Dialog-v0") for _ in range(3)]
    firsts = [e.reset(seed=s) for e, s in zip(envs, (10, 11, 10))]
    solo = []
    for obs, info in firsts:
        agent.reset(obs, info)
        solo.append(agent.act(obs, info))
    batched = agent.act_batch([o for o, _ in firsts], [i for _, i in firsts])
    assert batched == solo, "each episode samples from its own generator, in any batch"
    assert solo[0] == solo[2] and solo[0] != solo[1]
    # the next turn continues each slot's conversation; a slot whose env reset starts over
    steps = [e.step(a) for e, a in zip(envs, batched)]
    obs2, info2 = envs[1].reset(seed=11)
    again = agent.act_batch([steps[0][0], obs2, steps[2][0]], [steps[0][4], info2, steps[2][4]])
    assert again[1] == solo[1] and again[0] == again[2]
    assert agent.slot_usage(1)["generations"] == 1 and agent.slot_usage(0)["generations"] == 2


def test_async_backend_batches_and_keeps_episodes_apart(tiny_model: Path, tmp_path: Path) -> None:
    """Four concurrent episodes on one agent: batched generate calls, and per episode the same
    actions and token counts as a sequential run."""
    jobs = [EpisodeJob("AgentRL/Dialog-v0", seed=s, kwargs=(("max_turns", 3),)) for s in range(4)]
    spec = AgentSpec("transformers", (("max_new_tokens", 6), ("model", str(tiny_model))))
    run_jobs(jobs, spec, tmp_path / "seq.jsonl", backend="process", workers=1, progress=False)
    loaded = load_model(str(tiny_model))
    loaded.batch_counts.clear()
    run_jobs(jobs, spec, tmp_path / "async.jsonl", backend="async", concurrency=4, timeout_s=None, progress=False)
    assert max(loaded.batch_counts) > 1, f"no batching: {dict(loaded.batch_counts)}"
    seq = {r["key"]: r for r in read_records(tmp_path / "seq.jsonl")}
    par = {r["key"]: r for r in read_records(tmp_path / "async.jsonl")}
    assert set(seq) == set(par) and len(seq) == 4
    for key in seq:
        assert par[key]["actions"] == seq[key]["actions"], key
        assert par[key]["usage"] == seq[key]["usage"], key


def test_async_backend_usage_is_per_episode_under_a_timeout(tiny_model: Path, tmp_path: Path) -> None:
    """With the per-episode timeout on, the runner reads `usage` after the episode's task: still its own."""
    jobs = [EpisodeJob("AgentRL/Dialog-v0", seed=s, kwargs=(("max_turns", 3),)) for s in range(3)]
    spec = AgentSpec("transformers", (("max_new_tokens", 4), ("model", str(tiny_model))))
    run_jobs(jobs, spec, tmp_path / "seq.jsonl", backend="process", workers=1, progress=False)
    run_jobs(jobs, spec, tmp_path / "async.jsonl", backend="async", concurrency=3, timeout_s=120, progress=False)
    seq = {r["key"]: r["usage"] for r in read_records(tmp_path / "seq.jsonl")}
    par = {r["key"]: r["usage"] for r in read_records(tmp_path / "async.jsonl")}
    assert par == seq


# ------------------------------------------------------------------ the full evaluation (must show)
def test_full_eval_every_id_with_noise_transformers(tiny_model: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    noise = noise_setting()
    ids = local_ids()
    assert ids, "the registry has AgentRL ids"
    jobs = [EpisodeJob(i, seed=s, noise=noise) for i in ids for s in range(3)]
    # A 512-token prompt budget keeps a 60-turn CrossTask session cheap (and trims it).
    spec = AgentSpec("transformers", (("max_new_tokens", 8), ("max_prompt_tokens", 512), ("model", str(tiny_model))))
    out = tmp_path / "tf.jsonl"
    summary = run_jobs(jobs, spec, out, backend="async", concurrency=len(jobs), timeout_s=None, progress=False)
    records = list(read_records(out))
    assert summary.ran == len(jobs) and summary.agent_errors == 0
    assert_complete(records, jobs)
    for rec in records:
        assert rec["usage"]["prompt_tokens"] > 0 and rec["usage"]["completion_tokens"] > 0, rec["key"]
        assert rec["usage"]["generations"] == rec["metrics"]["turns"]
        assert rec["env"]["noise"] == noise
    # and once through the command line
    cli_out = tmp_path / "cli.jsonl"
    code = cli_main(["eval", ids[-1], "--agent", "transformers", "--agent-arg", f"model={tiny_model}",
                     "--agent-arg", "max_new_tokens=4", "--agent-arg", "max_prompt_tokens=1024",
                     "--episodes", "2", "--backend", "async",
                     "--concurrency", "2", "--out", str(cli_out), "--json"]
                    + (["--noise", noise] if noise else []))
    assert code == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["n"] == 2 and line["agent_errors"] == 0
    cli_records = list(read_records(cli_out))
    assert len(cli_records) == 2 and all(r["agent_error"] is None and r["usage"]["prompt_tokens"] > 0
                                         for r in cli_records)
    assert set(cli_records[0]) == RECORD_KEYS


def test_full_eval_every_id_with_noise_openai_under_server_faults(tmp_path: Path) -> None:
    """A server that answers 30% of requests with a 429, a 500, a hang, a broken body or broken
    tool-call arguments: every episode is recorded, and the records account for every answer."""
    noise = noise_setting()
    jobs = [EpisodeJob(i, seed=s, noise=noise) for i in local_ids() for s in range(3)]
    server = FakeOpenAIServer(chaos=0.3, seed=3, hang_s=2.0)
    with serve(server) as url:
        spec = AgentSpec("openai", (("backoff_s", 0.01), ("base_url", url), ("max_backoff_s", 0.05),
                                    ("model", "fake"), ("timeout_s", 1.0)))
        out = tmp_path / "oa.jsonl"
        summary = run_jobs(jobs, spec, out, backend="async", concurrency=len(jobs), timeout_s=None, progress=False)
        records = list(read_records(out))
        assert summary.ran == len(jobs)
        assert_complete(records, jobs)
        assert server.wait_idle()  # the books count requests given up on, and those come late
        failures: Counter[str] = Counter()
        for rec in records:
            failures.update(rec["usage"]["failures"])
        # A reply the server gave that came later than the client's timeout (a loaded machine) is
        # one timeout more on the client's side and one answered request less: still accounted.
        # One the client gave up on before it was even sent (a connection slower than the
        # timeout) never reaches the server: so the late ones bound the difference.
        # A hang the server answered (its 504 "too late") before the client's timer fired, on a
        # machine too loaded for the timer to run first, is a hang the client saw as a 504.
        late = failures["timeout"] + failures["504"] - server.served["timeout"]
        assert late >= 0, (failures, server.served)
        answered = sum(r["usage"]["requests"] for r in records)
        assert answered <= server.served["ok"] <= answered + late, (answered, late, server.served)
        assert {k: failures[k] for k in FAULTS if k != "timeout"} == {k: server.served[k] for k in FAULTS if k != "timeout"}
        assert all(server.served[k] > 0 for k in FAULTS), server.served
        assert all(r["usage"]["prompt_tokens"] > 0 for r in records if r["usage"]["requests"])
        codes = Counter(c for r in records for s in r["steps"] for c in s["errors"])
        assert codes["PARSE_ERROR"] + codes["INVALID_ARGS"] > 0, "broken arguments reach the env and count"
        # and once through the command line
        cli_out = tmp_path / "cli.jsonl"
        code = cli_main(["eval", local_ids()[-1], "--agent", "openai", "--agent-arg", f"base_url={url}",
                         "--agent-arg", "model=fake", "--agent-arg", "backoff_s=0.01", "--agent-arg",
                         "max_backoff_s=0.05", "--agent-arg", "timeout_s=1.0", "--episodes", "2",
                         "--backend", "async", "--out", str(cli_out), "--json"] + (["--noise", noise] if noise else []))
        assert code == 0
        assert len(list(read_records(cli_out))) == 2


# ------------------------------------------------------------------ the openai agent, fault by fault
@pytest.fixture
def server() -> Iterator[tuple[FakeOpenAIServer, str]]:
    srv = FakeOpenAIServer()
    with serve(srv) as url:
        yield srv, url


def quick_agent(url: str, **kwargs: Any) -> OpenAIAgent:
    settings = dict(model="fake", base_url=url, backoff_s=0.001, max_backoff_s=0.01, timeout_s=1.0)
    settings.update(kwargs)
    return OpenAIAgent(**settings)


def test_openai_retries_429_500_timeouts_and_broken_bodies(server: tuple[FakeOpenAIServer, str]) -> None:
    srv, url = server
    srv.hang_s = 8.0
    srv.push({"status": 429, "retry_after": "100"}, {"status": 503}, {"hang": 8.0}, {"raw": "<html>"},
             {"text": "Which date?"})
    # The client's timeout well below the hang and well above a reply on a loaded machine (1 s
    # was not, at a load of 10 on two cores): a prompt reply that came late would count as one
    # timeout more.
    agent = quick_agent(url, timeout_s=4.0)
    env = gym.make("AgentRL/Dialog-v0")
    obs, info = env.reset(seed=0)
    agent.reset(obs, info)
    assert agent.act(obs, info) == "Which date?", "Retry-After 100 s is capped at max_backoff_s"
    assert agent.usage()["failures"] == {"429": 1, "503": 1, "timeout": 1, "invalid_response": 1}
    assert agent.usage()["retries"] == 4 and agent.usage()["requests"] == 1


def test_openai_gives_up_after_max_retries_and_the_run_goes_on(server: tuple[FakeOpenAIServer, str],
                                                               tmp_path: Path) -> None:
    srv, url = server
    srv.push(*[{"status": 500}] * 3)
    spec = AgentSpec("openai", (("backoff_s", 0.001), ("base_url", url), ("max_retries", 2), ("model", "fake")))
    jobs = [EpisodeJob("AgentRL/Dialog-v0", seed=s, kwargs=(("max_turns", 2),)) for s in range(2)]
    summary = run_jobs(jobs, spec, tmp_path / "r.jsonl", backend="async", concurrency=1, timeout_s=None,
                       progress=False)
    records = {r["seed"]: r for r in read_records(tmp_path / "r.jsonl")}
    assert summary.ran == 2 and summary.agent_errors == 1
    error = records[0]["agent_error"]
    assert error["type"] == "OpenAIAgentError" and "after 3 tries" in error["message"]
    assert records[0]["usage"]["failures"] == {"500": 3}
    assert records[1]["agent_error"] is None and records[1]["metrics"]["turns"] == 2


def test_openai_connection_refused_is_retried_then_an_error() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = quick_agent(f"http://127.0.0.1:{port}/v1", max_retries=1)
    obs, info = gym.make("AgentRL/Dialog-v0").reset(seed=0)
    agent.reset(obs, info)
    with pytest.raises(OpenAIAgentError, match="after 2 tries"):
        agent.act(obs, info)
    assert agent.usage()["failures"] == {"connection": 2} and agent.usage()["requests"] == 0
    agent.close()


def test_openai_client_errors_are_not_retried(server: tuple[FakeOpenAIServer, str]) -> None:
    srv, url = server
    srv.push({"status": 401})
    agent = quick_agent(url)
    obs, info = gym.make("AgentRL/Dialog-v0").reset(seed=0)
    agent.reset(obs, info)
    with pytest.raises(OpenAIAgentError, match="HTTP 401"):
        agent.act(obs, info)
    assert len(srv.requests) == 1


def test_openai_tool_calls_pass_through_and_pair_with_results(server: tuple[FakeOpenAIServer, str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    srv, url = server
    monkeypatch.setenv("AGENTGYM_TEST_KEY", "sk-secret")
    env = gym.make("AgentRL/ToolUse-v0")
    obs, info = env.reset(seed=2)
    name = info["tools"][0]["function"]["name"]
    srv.push({"tool_calls": [{"id": "call_a", "type": "function", "function": {"name": name, "arguments": "{}"}},
                             {"id": "call_b", "type": "function", "function": {"name": name, "arguments": '{"x": '}}]},
             {"text": "<tool_call>{\"name\": \"%s\", \"arguments\": {}}</tool_call>" % name},
             {"text": "done"})
    agent = quick_agent(url, api_key_env="AGENTGYM_TEST_KEY")
    agent.reset(obs, info)
    action = agent.act(obs, info)
    assert isinstance(action, dict) and action["tool_calls"][1]["function"]["arguments"] == '{"x": '
    obs, _, _, _, info = env.step(action)
    assert info["calls"][1]["error"] in ("PARSE_ERROR", "INVALID_ARGS"), "the env reports the broken call"
    text = agent.act(obs, info)
    obs, _, _, _, info = env.step(text)
    assert info["calls"] and info["calls"][0]["name"] == name, "a call written as text is a call"
    agent.act(obs, info)
    sent = srv.requests[1]
    assert sent["tools"] == env.reset(seed=2)[1]["tools"] and sent["tool_choice"] == "auto"
    assistant, results = sent["messages"][2], sent["messages"][3:5]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert [m["tool_call_id"] for m in results] == ["call_a", "call_b"]
    assert all(isinstance(c["function"]["arguments"], str) for c in assistant["tool_calls"])
    assert srv.headers[0]["authorization"] == "Bearer sk-secret"
    assert "sk-secret" not in json.dumps(agent.config()) and agent.config()["api_key_env"] == "AGENTGYM_TEST_KEY"
    assert agent.usage()["requests"] == 3 and agent.usage()["completion_tokens"] == 21
    agent.close()


def test_openai_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="needs model=NAME"):
        make_agent("openai")
    with pytest.raises(ValueError, match="unknown openai agent settings \\['api_key'\\]"):
        make_agent("openai", model="m", api_key="sk-x")
    with pytest.raises(ValueError, match="base_url"):
        make_agent("openai", model="m", base_url="localhost:8000")
