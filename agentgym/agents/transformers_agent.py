"""`transformers`: a local Hugging Face causal LM as an agent.

    agentgym eval AgentRL/Dialog-v0 --agent transformers --agent-arg model=PATH \\
        --backend async --concurrency 8

The agent loads a causal LM and its tokenizer from a local folder (nothing is downloaded),
renders the conversation with the tokenizer's chat template and the env's tools
(``apply_chat_template(messages, tools=...)``), generates, and returns the decoded text as the
action. Tool calls come out in whatever form the model writes them (``<tool_call>`` JSON, bare
JSON, OpenAI style): the env's parser reads all of them, and garbage is the env's to report.

Conversation: `agentgym.agents.chat.Conversation`, fed with the env's normalised assistant
message and new messages after every step, trimmed to ``max_prompt_tokens`` by dropping the
oldest turns (the system message and the user's opening request stay).

Batching: with ``--backend async --concurrency N`` the harness awaits `aact` for up to N
episodes at once (one agent instance per concurrent episode). Every agent of a process with the
same model, device and dtype shares one loaded model (`load_model`), and the model has one
request queue per event loop and sampling setting: requests wait until ``batch_size`` are
pending or ``batch_window_ms`` has passed since the first, then run as one left-padded
``generate`` call in a worker thread; requests that arrive meanwhile form the next batch. A
lock lets one ``generate`` run at a time. `act_batch` batches for a caller that steps several
envs itself (a vectorised rollout). The sync `act` generates for one episode.

Sampling: ``temperature=0`` is greedy. Otherwise every episode samples from its own
``torch.Generator``, seeded from the episode seed, the trial and ``seed``
(`chat.episode_sampling_seed`), so an episode samples the same tokens in any batch and any
process. The model's own ``generation_config`` sampling defaults are not used: the settings
here are the ones recorded in `config`.

Usage: ``usage()`` gives the episode's prompt and completion tokens (every prompt token sent,
every token generated up to and including the stop token), which the runner records.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import threading
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.agents.base import Agent, settings_from
from agentgym.agents.chat import (
    DEFAULT_CHAT_TEMPLATE,
    ChatEpisode,
    Conversation,
    EpisodeLocal,
    episode_sampling_seed,
    opens_with_assistant,
    trim_messages,
)

__all__ = ["TransformersAgent", "TransformersConfig", "LoadedModel", "ModelMemoryError", "load_model",
           "check_fits", "clear_model_cache"]

_DTYPES = ("auto", "float32", "bfloat16", "float16")
_BYTES_PER_PARAM = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8, "int8": 1}
_REASONING = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


class ModelMemoryError(ValueError):
    """The model does not fit in the device's memory (estimated before loading, or out of memory)."""


@dataclass(frozen=True)
class TransformersConfig:
    """The settings of a `TransformersAgent` (``--agent-arg key=value``)."""

    #: The local folder of the model and tokenizer (what ``save_pretrained`` wrote).
    model: str = ""
    #: The most tokens generated per turn.
    max_new_tokens: int = 256
    #: Sampling temperature; 0 is greedy decoding.
    temperature: float = 0.0
    #: Nucleus sampling mass (with temperature > 0); 1 keeps every token.
    top_p: float = 1.0
    #: Mixed into every episode's sampling seed (with temperature > 0).
    seed: int = 0
    #: ``cpu``, ``cuda``, ``cuda:N``, or ``auto`` (cuda when available).
    device: str = "cpu"
    #: ``auto`` (the checkpoint's), ``float32``, ``bfloat16`` or ``float16``.
    dtype: str = "auto"
    #: The most episodes generated for in one call (async backend and `act_batch`).
    batch_size: int = 8
    #: How long the first queued request waits for others before a batch runs (async backend).
    batch_window_ms: float = 10.0
    #: None: the tokenizer's template; ``default``: agentgym's ChatML template with tools; or a
    #: path to a Jinja file.
    chat_template: str | None = None
    #: The prompt budget in tokens; None: the model's context length minus max_new_tokens.
    max_prompt_tokens: int | None = None
    #: Keep the user's opening message when old turns are dropped to fit the budget.
    keep_first_user: bool = True
    #: Drop a leading ``<think>...</think>`` block from the model's output (reasoning models).
    strip_reasoning: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("the transformers agent needs model=PATH (--agent-arg model=PATH)")
        if not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a positive int, got {self.max_new_tokens!r}")
        if not isinstance(self.temperature, (int, float)) or self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if not isinstance(self.top_p, (int, float)) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {self.dtype!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}")
        if not isinstance(self.batch_window_ms, (int, float)) or self.batch_window_ms < 0:
            raise ValueError(f"batch_window_ms must be >= 0, got {self.batch_window_ms!r}")
        if self.max_prompt_tokens is not None and (not isinstance(self.max_prompt_tokens, int)
                                                   or self.max_prompt_tokens < 1):
            raise ValueError(f"max_prompt_tokens must be a positive int or None, got {self.max_prompt_tokens!r}")


@dataclass(frozen=True)
class _Sampling:
    max_new_tokens: int
    temperature: float
    top_p: float


# ---------------------------------------------------------------------------------------------
# Loading, with clear errors
# ---------------------------------------------------------------------------------------------
def _available_bytes(device: str) -> int | None:
    """Free memory on `device`: MemAvailable from /proc/meminfo for the CPU, the CUDA free memory."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _weights_bytes(path: Path, dtype: str) -> int:
    """The weights' size in memory: their size on disk, scaled to `dtype` from the saved dtype."""
    files = [p for p in path.iterdir() if p.is_file() and p.suffix in (".safetensors", ".bin", ".pt", ".pth")
             and not p.name.startswith(("optimizer", "training_args"))]
    on_disk = sum(p.stat().st_size for p in files)
    if dtype == "auto":
        return on_disk
    try:
        saved = json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        return on_disk
    saved_dtype = str(saved.get("torch_dtype") or saved.get("dtype") or "float32")
    return on_disk * _BYTES_PER_PARAM[dtype] // _BYTES_PER_PARAM.get(saved_dtype, 4)


def check_fits(path: str | Path, device: str, dtype: str, available: int | None = None) -> None:
    """Raise `ModelMemoryError` (a ValueError) when the weights will not fit in `device`'s free memory.

    Args:
        path: the model folder.
        device: the device it will load on.
        dtype: the dtype it will load in (``auto``: as saved).
        available: free bytes (default: read from the system).
    """
    need = _weights_bytes(Path(path), dtype)
    free = _available_bytes(device) if available is None else available
    if free is not None and need * 1.2 > free:  # weights plus room for activations and the KV cache
        raise ModelMemoryError(
            f"the model at {path} does not fit: its weights need about {need / 2**30:.2f} GiB "
            f"({dtype}) and {device} has {free / 2**30:.2f} GiB free; use a smaller model, "
            f"--agent-arg dtype=bfloat16, or another device")


def _oom_error(exc: BaseException, path: str, device: str, when: str) -> ModelMemoryError | None:
    import torch

    text = str(exc)
    if isinstance(exc, torch.OutOfMemoryError) or "out of memory" in text or "can't allocate memory" in text:
        return ModelMemoryError(f"the model at {path} ran out of memory on {device} while {when}; use a smaller "
                          f"model or batch_size, --agent-arg dtype=bfloat16, or another device ({text[:200]})")
    return None


def _resolve_template(tokenizer: Any, choice: str | None, path: str) -> str:
    if choice is None:
        template = tokenizer.chat_template
        if isinstance(template, dict):  # named templates: the tool-use one when there is one
            template = template.get("tool_use") or template.get("default")
        if not template:
            raise ValueError(
                f"the tokenizer at {path} has no chat template; pass --agent-arg chat_template=default "
                f"for agentgym's built-in ChatML template with tools (Qwen/Hermes style), or "
                f"chat_template=FILE.jinja")
        return str(template)
    if choice == "default":
        return DEFAULT_CHAT_TEMPLATE
    file = Path(choice).expanduser()
    if file.is_file():
        return file.read_text(encoding="utf-8")
    raise ValueError(f"chat_template must be 'default' or a Jinja file; {choice!r} is neither")


class LoadedModel:
    """A model, its tokenizer and chat template, shared by the agents of a process that use it."""

    def __init__(self, path: str, device: str, dtype: str, chat_template: str | None) -> None:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = Path(path).expanduser()
        if not folder.exists():
            raise ValueError(f"no model at {path}")
        if not (folder / "config.json").is_file():
            raise ValueError(f"no model at {path}: the folder has no config.json (a folder written by "
                             f"save_pretrained is expected; nothing is downloaded)")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        check_fits(folder, device, dtype)
        self.path, self.device = str(folder), device
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.template = _resolve_template(self.tokenizer, chat_template, path)
        dtype_arg = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
        try:
            model = AutoModelForCausalLM.from_pretrained(
                folder, local_files_only=True, **{dtype_arg: "auto" if dtype == "auto" else getattr(torch, dtype)})
            self.model = model.to(device).eval()
        except (RuntimeError, MemoryError) as exc:
            oom = _oom_error(exc, path, device, "loading")
            if oom is None:
                raise
            raise oom from exc
        self.context_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 0) or None
        self.stop_ids = self._stop_ids()
        self.pad_id = next(i for i in (self.tokenizer.pad_token_id, self.tokenizer.eos_token_id, 0) if i is not None)
        # Control tokens are dropped from the decoded text; tool-call tags are kept even where a
        # tokenizer marks them special, since they carry the call.
        self._drop_ids = {self.tokenizer.convert_tokens_to_ids(t) for t in self.tokenizer.all_special_tokens
                          if "tool" not in t}
        self._sanitize = _supports_sanitize(self.tokenizer)
        # Special tokens as they appear in text, and as JSON writes them (quotes, backslashes).
        self._markers = {form for t in self.tokenizer.all_special_tokens for form in (t, json.dumps(t)[1:-1])}
        self.lock = threading.Lock()
        #: How many batches of each size the async backend has run on this model.
        self.batch_counts: Counter[int] = Counter()
        self._batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Sampling, _Batcher]] = \
            weakref.WeakKeyDictionary()

    def _stop_ids(self) -> frozenset[int]:
        ids: set[int] = set()
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        ids.update(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        for marker in ("<|im_end|>", "<|eot_id|>", "<|end|>"):  # end-of-turn markers the template writes
            if marker in self.template:
                tid = self.tokenizer.convert_tokens_to_ids(marker)
                if isinstance(tid, int) and tid != self.tokenizer.unk_token_id:
                    ids.add(tid)
        return frozenset(ids)

    # ------------------------------------------------------------------ prompts
    def encode(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[int]:
        """The prompt's token ids: the chat template with tools and the generation prompt.

        Control tokens written inside messages or tools (a user typing "<|im_end|>") are
        encoded as text where transformers can (>= 5), so only the template's own markers
        are control tokens. The check for them is cheap; the sanitising encode is not, so it
        runs only when one is there.
        """
        kwargs: dict[str, Any] = {}
        if self._sanitize and self._mentions_control_token(messages, tools):
            kwargs["sanitize_control_tokens"] = True
        out = self.tokenizer.apply_chat_template(messages, tools=tools or None, chat_template=self.template,
                                                 add_generation_prompt=True, tokenize=True, return_dict=True,
                                                 **kwargs)
        return list(out["input_ids"])

    def _mentions_control_token(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
        blob = json.dumps([messages, tools], ensure_ascii=False)
        return any(marker in blob for marker in self._markers)

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        """The prompt as text (what `encode` tokenizes)."""
        return self.tokenizer.apply_chat_template(messages, tools=tools or None, chat_template=self.template,
                                                  add_generation_prompt=True, tokenize=False)

    def decode(self, completion: list[int]) -> str:
        """The text of a completion (without its stop token and control tokens)."""
        return self.tokenizer.decode([i for i in completion if i not in self._drop_ids and i not in self.stop_ids],
                                     skip_special_tokens=False)

    # ------------------------------------------------------------------ generation
    def generate(self, prompts: list[list[int]], generators: list[Any], sampling: _Sampling) -> list[list[int]]:
        """One left-padded ``generate`` call; each completion ends at (and includes) its stop token."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            ids[row, width - len(prompt):] = torch.tensor(prompt, dtype=torch.long)
            mask[row, width - len(prompt):] = 1
        config = GenerationConfig(max_new_tokens=sampling.max_new_tokens, do_sample=False,
                                  eos_token_id=sorted(self.stop_ids) or None, pad_token_id=self.pad_id)
        processors = LogitsProcessorList()
        if sampling.temperature > 0:
            processors.append(_SeededSampler(generators, sampling.temperature, sampling.top_p, self.stop_ids))
        with self.lock:
            try:
                with torch.inference_mode():
                    out = self.model.generate(ids.to(self.device), attention_mask=mask.to(self.device),
                                              generation_config=config, logits_processor=processors)
            except (RuntimeError, MemoryError) as exc:
                oom = _oom_error(exc, self.path, self.device, f"generating for {len(prompts)} episodes")
                if oom is None:
                    raise
                raise oom from exc
        completions = []
        for row in out[:, width:].tolist():
            end = next((i + 1 for i, t in enumerate(row) if t in self.stop_ids), len(row))
            completions.append(row[:end])
        return completions

    def batcher(self, sampling: _Sampling, batch_size: int, window_s: float) -> "_Batcher":
        """The request queue of the running event loop for these sampling settings."""
        loop = asyncio.get_running_loop()
        per_loop = self._batchers.setdefault(loop, {})
        batcher = per_loop.get(sampling)
        if batcher is None:
            batcher = per_loop[sampling] = _Batcher(self, sampling, batch_size, window_s)
        return batcher


def _supports_sanitize(tokenizer: Any) -> bool:
    # transformers >= 5 can encode control tokens found in messages as text, so a user message
    # holding "<|im_end|>" cannot end its turn early; older versions lack the option.
    import inspect

    return "sanitize_control_tokens" in inspect.signature(tokenizer.apply_chat_template).parameters


class _SeededSampler:
    """Samples each row from its own generator (a logits processor under greedy decoding).

    It turns each row's scores into a one-hot choice, so ``generate``'s argmax picks the sampled
    token. Rows that have stopped draw nothing, so an episode's draws never depend on how long
    the other episodes of its batch run.
    """

    def __init__(self, generators: list[Any], temperature: float, top_p: float, stop_ids: frozenset[int]) -> None:
        self.generators, self.temperature, self.top_p, self.stop_ids = generators, temperature, top_p, stop_ids
        self._calls = 0
        self._done = [False] * len(generators)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        out = torch.full_like(scores, float("-inf"))
        last = input_ids[:, -1].tolist()
        for row, gen in enumerate(self.generators):
            if self._calls and last[row] in self.stop_ids:
                self._done[row] = True
            if self._done[row]:
                out[row] = scores[row]
                continue
            probs = torch.softmax(scores[row].float() / self.temperature, dim=-1)
            if self.top_p < 1:
                sorted_probs, order = torch.sort(probs, descending=True)
                cut = torch.cumsum(sorted_probs, dim=-1) - sorted_probs >= self.top_p
                sorted_probs[cut] = 0
                probs = torch.zeros_like(probs).scatter(0, order, sorted_probs)
            token = torch.multinomial(probs, 1, generator=gen)
            out[row, token] = 0.0
        self._calls += 1
        return out


class _Batcher:
    """Gathers concurrent requests of one event loop into batched ``generate`` calls."""

    def __init__(self, model: LoadedModel, sampling: _Sampling, batch_size: int, window_s: float) -> None:
        self.model, self.sampling, self.batch_size, self.window_s = model, sampling, batch_size, window_s
        self._pending: list[tuple[list[int], Any, asyncio.Future[list[int]]]] = []
        self._full = asyncio.Event()
        self._drainer: asyncio.Task[None] | None = None

    async def submit(self, prompt: list[int], generator: Any) -> list[int]:
        """The completion of `prompt`, generated in a batch with whatever else is queued."""
        future: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        item = (prompt, generator, future)
        self._pending.append(item)
        if len(self._pending) >= self.batch_size:
            self._full.set()
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.get_running_loop().create_task(self._drain())
        try:
            return await future
        except asyncio.CancelledError:  # the episode timed out: its request is dropped if not yet run
            if item in self._pending:
                self._pending.remove(item)
            raise

    async def _drain(self) -> None:
        while self._pending:
            if len(self._pending) < self.batch_size:
                try:
                    await asyncio.wait_for(self._full.wait(), self.window_s)
                except TimeoutError:
                    pass
            batch, self._pending = self._pending[: self.batch_size], self._pending[self.batch_size:]
            if len(self._pending) < self.batch_size:
                self._full.clear()
            if not batch:
                continue
            self.model.batch_counts[len(batch)] += 1
            try:
                results = await asyncio.to_thread(self.model.generate, [b[0] for b in batch], [b[1] for b in batch],
                                                  self.sampling)
            except Exception as exc:  # noqa: BLE001 - handed to every waiting episode, which records it
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
            else:
                for (_, _, future), result in zip(batch, results):
                    if not future.done():
                        future.set_result(result)


_MODELS: dict[tuple[str, str, str, str | None], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(path: str, device: str = "cpu", dtype: str = "auto", chat_template: str | None = None) -> LoadedModel:
    """The process's `LoadedModel` for these settings, loaded on first use.

    Raises:
        ValueError: no model at `path`, a tokenizer without a chat template, or a model that
            does not fit in memory; the message says what to do.
    """
    key = (str(Path(path).expanduser().resolve()), device, dtype, chat_template)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is None:
            loaded = _MODELS[key] = LoadedModel(path, device, dtype, chat_template)
        return loaded


def clear_model_cache() -> None:
    """Forget the loaded models (they are freed once no agent holds them)."""
    with _MODELS_LOCK:
        _MODELS.clear()


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------
@dataclass
class _Episode(ChatEpisode):
    generator: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    trimmed_prompts: int = 0
    cut_prompts: int = 0
    trim_start: int = 0


class TransformersAgent(Agent):
    """A local Hugging Face causal LM, prompted with its chat template and the env's tools.

    Args:
        **kwargs: the fields of `TransformersConfig` (``model`` is required).

    Raises:
        ValueError: an unknown or invalid setting, or a model that cannot be loaded (see
            `load_model`).
    """

    name = "transformers"

    def __init__(self, **kwargs: Any) -> None:
        self.settings = settings_from(TransformersConfig, kwargs, "transformers")
        s = self.settings
        self.loaded = load_model(s.model, s.device, s.dtype, s.chat_template)
        self._sampling = _Sampling(s.max_new_tokens, float(s.temperature), float(s.top_p))
        context = self.loaded.context_length
        self.max_prompt_tokens = s.max_prompt_tokens or (max(1, context - s.max_new_tokens) if context else 32_768)
        self._episode: EpisodeLocal[_Episode] = EpisodeLocal("transformers_agent_episode")
        self._slots: list[_Episode] = []

    def config(self) -> dict[str, Any]:
        return dataclasses.asdict(self.settings)

    # ------------------------------------------------------------------ episodes
    def _new_episode(self, info: dict[str, Any]) -> _Episode:
        generator = None
        if self._sampling.temperature > 0:
            import torch

            generator = torch.Generator(device=self.loaded.device)
            generator.manual_seed(episode_sampling_seed(info, self.settings.seed))
        return _Episode(Conversation.from_reset(info), generator=generator)

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._episode.set(self._new_episode(info))

    def _current(self) -> _Episode:
        episode = self._episode.get()
        if episode is None:
            raise RuntimeError("act() before reset(): the agent has no episode")
        return episode

    def _observe(self, episode: _Episode, info: dict[str, Any]) -> list[int]:
        """Take in a step's info (not the reset info, which opened the conversation); the prompt."""
        episode.observe(info)
        return self._prompt(episode)

    def _prompt(self, episode: _Episode) -> list[int]:
        loaded, conversation = self.loaded, episode.conversation
        messages = conversation.template_messages()
        budget = self.max_prompt_tokens
        encoded: dict[int, list[int]] = {}  # the candidates are head + a suffix: their length tells them apart

        def encode(kept: list[dict[str, Any]]) -> list[int]:
            ids = encoded.get(len(kept))
            if ids is None:
                ids = encoded[len(kept)] = loaded.encode(kept, conversation.tools)
            return ids

        kept, episode.trim_start = trim_messages(messages, lambda ms: len(encode(ms)) <= budget,
                                                 self.settings.keep_first_user, episode.trim_start)
        ids = encode(kept)
        episode.trimmed_prompts += kept is not messages
        if len(ids) > budget:  # not even the head and the last turn fit: keep the end, which asks for the turn
            episode.cut_prompts += 1
            ids = ids[-budget:]
        return ids

    def _finish(self, episode: _Episode, prompt: list[int], completion: list[int]) -> str:
        text = self.loaded.decode(completion)
        if self.settings.strip_reasoning:
            text = _REASONING.sub("", text, count=1)
        episode.prompt_tokens += len(prompt)
        episode.completion_tokens += len(completion)
        episode.took(text)
        return text

    def act(self, obs: str, info: dict[str, Any]) -> str:
        episode = self._current()
        prompt = self._observe(episode, info)
        completion = self.loaded.generate([prompt], [episode.generator], self._sampling)[0]
        return self._finish(episode, prompt, completion)

    async def aact(self, obs: str, info: dict[str, Any]) -> str:
        """`act` for the async backend: the generation joins a batch with other episodes'."""
        episode = self._current()
        prompt = self._observe(episode, info)
        batcher = self.loaded.batcher(self._sampling, self.settings.batch_size, self.settings.batch_window_ms / 1000)
        completion = await batcher.submit(prompt, episode.generator)
        return self._finish(episode, prompt, completion)

    def act_batch(self, observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        """One turn for each of several episodes (slot i: the i-th env of a vectorised loop).

        A slot whose info is a reset info (its messages do not open with the assistant's turn)
        starts a new episode, so an env that resets on its own is followed; otherwise the step
        is added to the slot's conversation. Prompts are generated for in chunks of ``batch_size``.

        Returns:
            The actions, in slot order.
        """
        if len(observations) != len(infos):
            raise ValueError(f"act_batch got {len(observations)} observations and {len(infos)} infos")
        if len(self._slots) != len(infos):
            self._slots = [self._new_episode(info) for info in infos]
        prompts = []
        for slot, info in enumerate(infos):
            if not opens_with_assistant(info.get("messages", [])) and self._slots[slot].turns:
                self._slots[slot] = self._new_episode(info)
            prompts.append(self._observe(self._slots[slot], info))
        actions = []
        size = self.settings.batch_size
        for start in range(0, len(prompts), size):
            chunk = range(start, min(start + size, len(prompts)))
            completions = self.loaded.generate([prompts[i] for i in chunk], [self._slots[i].generator for i in chunk],
                                               self._sampling)
            actions.extend(self._finish(self._slots[i], prompts[i], c) for i, c in zip(chunk, completions))
        return actions

    # ------------------------------------------------------------------ accounting
    def usage(self) -> dict[str, int] | None:
        """Tokens of the current (or last) episode: prompt and completion, and how prompts fared."""
        episode = self._episode.get()
        return None if episode is None else _usage(episode)

    def slot_usage(self, slot: int) -> dict[str, int]:
        """Tokens of the episode in `act_batch` slot `slot`."""
        return _usage(self._slots[slot])

    def render_prompt(self) -> str:
        """The prompt text the current episode's next turn would be generated from."""
        episode = self._current()
        conversation = episode.conversation
        return self.loaded.render(conversation.template_messages(), conversation.tools)


def _usage(episode: _Episode) -> dict[str, int]:
    return {"prompt_tokens": episode.prompt_tokens, "completion_tokens": episode.completion_tokens,
            "generations": episode.turns, "trimmed_prompts": episode.trimmed_prompts,
            "cut_prompts": episode.cut_prompts}
