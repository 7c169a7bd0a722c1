import random
import signal
import subprocess
import sys
import time
import warnings
from datetime import UTC, datetime

import pytest

from motivegym.reward_layers.llm.client import (
    MAX_RESPONSE_BYTES,
    LLMClient,
    LLMResponseError,
    LLMTimeoutError,
    LLMTruncatedError,
    LLMUnavailableError,
    ResponseCache,
    cache_key,
    parse_retry_after,
)

HELLO = [{"role": "user", "content": "Suggest up to 2 goals"}]


def client_for(url, **kwargs):
    kwargs.setdefault("backoff", 0.0)
    return LLMClient(base_url=url, model="test-model", **kwargs)


def test_chat_returns_the_first_choice_content(llm_server):
    assert client_for(llm_server.base_url).chat(HELLO) == "Goals:\n- build trust\n- cooperate more"
    request = llm_server.requests[0]
    assert request["model"] == "test-model" and request["messages"] == HELLO


def test_second_run_with_the_same_cache_file_sends_no_request(llm_server, tmp_path):
    cache = tmp_path / "cache.jsonl"
    prompts = [[{"role": "user", "content": f"question {k}"}] for k in range(5)]
    first = client_for(llm_server.base_url, cache_path=cache).chat_many(prompts, temperature=0.0)
    assert llm_server.num_requests == 5
    again = client_for(llm_server.base_url, cache_path=cache)
    assert again.chat_many(prompts, temperature=0.0) == first
    assert llm_server.num_requests == 5 and again.requests_sent == 0 and again.cache_hits == 5
    again.chat(prompts[0], temperature=0.5)  # other params: another key
    assert llm_server.num_requests == 6


def test_cache_key_depends_on_model_messages_and_params():
    base = cache_key("m", HELLO, {"temperature": 0.0})
    assert base == cache_key("m", HELLO, {"temperature": 0.0})
    assert len({base, cache_key("n", HELLO, {"temperature": 0.0}), cache_key("m", HELLO, {"temperature": 1.0}), cache_key("m", HELLO * 2, {"temperature": 0.0})}) == 4


def test_retries_after_server_errors_then_succeeds(llm_server):
    llm_server.fail_next = 2
    client = client_for(llm_server.base_url, max_retries=2)
    assert client.chat(HELLO).startswith("Goals:")
    assert llm_server.num_requests == 3


def test_persistent_server_errors_raise_after_the_retries(llm_server):
    llm_server.fail_next = 10
    with pytest.raises(LLMResponseError, match="HTTP 500 on all 3 attempts"):
        client_for(llm_server.base_url, max_retries=2).chat(HELLO)
    assert llm_server.num_requests == 3


def test_client_errors_are_not_retried(llm_server):
    client = LLMClient(base_url=llm_server.base_url.replace("/v1", "/wrong"), model="m", backoff=0.0)
    client.url = client.base_url + "/other"
    with pytest.raises(LLMResponseError, match="HTTP 404"):
        client.chat(HELLO)
    assert llm_server.num_requests == 1


def test_timeout_raises_a_timeout_error(llm_server):
    llm_server.sleep = 0.5
    with pytest.raises(LLMTimeoutError, match="did not answer within 0.1 s"):
        client_for(llm_server.base_url, timeout=0.1, max_retries=1).chat(HELLO)


def test_unreachable_server_names_the_url(unused_url):
    with pytest.raises(LLMUnavailableError, match=f"cannot reach the LLM server at {unused_url}/chat/completions"):
        client_for(unused_url, max_retries=1).chat(HELLO)


def test_bad_json_raises_a_clear_error(llm_server):
    llm_server.bad_json = True
    with pytest.raises(LLMResponseError, match="not JSON"):
        client_for(llm_server.base_url).chat(HELLO)


def test_batch_keeps_order_and_respects_max_workers(llm_server):
    llm_server.sleep = 0.05
    prompts = [[{"role": "user", "content": "Episode:\n" + str(k)}] for k in range(6)]
    llm_server.judge = lambda episode: f"Score: {episode.strip()}"
    answers = client_for(llm_server.base_url, max_workers=2).chat_many(prompts)
    assert answers == [f"Score: {k}" for k in range(6)]
    assert llm_server.max_in_flight <= 2


def test_settings_from_environment_variables(llm_server, monkeypatch):
    monkeypatch.setenv("MOTIVEGYM_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("MOTIVEGYM_LLM_MODEL", "env-model")
    monkeypatch.delenv("MOTIVEGYM_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "secret-123")
    LLMClient(backoff=0.0).chat(HELLO)
    assert llm_server.requests[0]["model"] == "env-model"
    assert llm_server.headers[0]["Authorization"] == "Bearer secret-123"


def test_missing_settings_raise(monkeypatch):
    for variable in ("MOTIVEGYM_LLM_BASE_URL", "OPENAI_BASE_URL", "MOTIVEGYM_LLM_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ValueError, match="MOTIVEGYM_LLM_BASE_URL"):
        LLMClient(model="m")
    with pytest.raises(ValueError, match="MOTIVEGYM_LLM_MODEL"):
        LLMClient(base_url="http://127.0.0.1:1/v1")


# ----- bounds: each test's server misbehaves in one way (real loopback server, conftest) -----
@pytest.mark.parametrize(
    "value, seconds",
    [("3", 3.0), (" 0.5 ", 0.5), ("0", 0.0), ("-1", None), ("nan", None), ("inf", None), ("1e400", None), ("soon", None), ("", None), (None, None)],
)
def test_retry_after_is_parsed_defensively(value, seconds):
    assert parse_retry_after(value) == seconds


def test_retry_after_as_an_http_date():
    now = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Mon, 01 Jan 2024 12:00:30 GMT", now) == pytest.approx(30.0)
    assert parse_retry_after("Mon, 01 Jan 2024 11:00:00 GMT", now) == 0.0  # a past date: retry now


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "garbage"])
def test_a_malformed_retry_after_falls_back_to_backoff_and_the_retry_succeeds(llm_server, value):
    # before: Retry-After -1 / nan reached time.sleep and raised a raw ValueError
    llm_server.fail_next, llm_server.fail_status, llm_server.retry_after = 1, 429, value
    assert client_for(llm_server.base_url, max_retries=1).chat(HELLO).startswith("Goals:")
    assert llm_server.num_requests == 2


def test_a_retry_after_past_the_deadline_ends_the_call_at_once(llm_server):
    llm_server.fail_next, llm_server.fail_status, llm_server.retry_after = 10, 503, "1000000"
    start = time.monotonic()
    with pytest.raises(LLMResponseError, match="HTTP 503 on all 1 attempt; the 5 s deadline left no time for a retry"):
        client_for(llm_server.base_url, timeout=5, max_retries=3).chat(HELLO)
    assert time.monotonic() - start < 30 and llm_server.num_requests == 1


def test_one_deadline_bounds_a_server_that_trickles_a_byte_every_half_second(llm_server):
    # before: the timeout was per read, so this call (one ~200-byte answer per attempt) lasted minutes
    llm_server.trickle = 0.5
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 1 s \(1 attempt, retries included\)"):
        client_for(llm_server.base_url, timeout=1, max_retries=2).chat(HELLO)
    assert time.monotonic() - start < 30


def test_one_deadline_covers_all_retries(llm_server):
    llm_server.fail_next = 10**6
    start = time.monotonic()
    with pytest.raises(LLMResponseError, match="deadline left no time for a retry"):
        client_for(llm_server.base_url, timeout=1.5, max_retries=1000, backoff=0.05).chat(HELLO)
    assert time.monotonic() - start < 30 and 1 < llm_server.num_requests < 1000


def test_a_body_cut_short_is_reported_as_such_after_the_retries(llm_server):
    # before: reported as "cannot reach the server"
    llm_server.truncate = True
    with pytest.raises(LLMTruncatedError, match=r"cut short after \d+ of \d+ bytes \(2 attempts\)"):
        client_for(llm_server.base_url, max_retries=1).chat(HELLO)
    assert llm_server.num_requests == 2


@pytest.mark.parametrize("announced", [True, False])
def test_a_100_mib_answer_is_refused_and_not_cached(llm_server, tmp_path, announced):
    # before: a 100 MiB body was accepted and cached
    llm_server.huge, llm_server.huge_length = 100 * 2**20, announced
    client = client_for(llm_server.base_url, cache_path=tmp_path / "cache.jsonl", max_retries=2)
    with pytest.raises(LLMResponseError, match=f"{MAX_RESPONSE_BYTES:,}"):
        client.chat(HELLO)
    assert llm_server.num_requests == 1 and len(client.cache) == 0 and not (tmp_path / "cache.jsonl").exists()


def test_the_response_cap_is_a_setting(llm_server):
    llm_server.huge = 4096
    with pytest.raises(LLMResponseError, match="at most 1,000"):
        client_for(llm_server.base_url, max_response_bytes=1000).chat(HELLO)
    assert len(client_for(llm_server.base_url, max_response_bytes=5000).chat(HELLO)) > 4000


def test_bad_bounds_are_refused():
    for kwargs in ({"timeout": 0}, {"timeout": float("nan")}, {"backoff": float("inf")}, {"max_response_bytes": 0}):
        with pytest.raises(ValueError, match="need timeout > 0"):
            LLMClient(base_url="http://127.0.0.1:1/v1", model="m", **kwargs)
    with pytest.raises(ValueError, match="http"):
        LLMClient(base_url="ftp://example/v1", model="m")


# ----- a cache that survives a kill at any byte -----
ENTRIES = [("k0", "first answer, ünïcödé"), ("k1", "second\nanswer"), ("k2", "third 🙂 answer")]


def test_cache_cut_at_every_byte_loads_every_complete_line_and_appends_after_it(tmp_path):
    path = tmp_path / "cache.jsonl"
    writer = ResponseCache(path)
    for key, content in ENTRIES:
        writer.put(key, content)
    data = path.read_bytes()
    line_ends = [i for i, byte in enumerate(data) if byte == ord("\n")]  # offsets of the newlines
    for cut in range(len(data) + 1):  # cuts inside multi-byte characters included
        path.write_bytes(data[:cut])
        complete = sum(end <= cut for end in line_ends)  # a line missing only its newline is complete JSON
        torn = cut not in [0, *line_ends, *(end + 1 for end in line_ends)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = ResponseCache(path)
        assert dict(loaded._answers) == dict(ENTRIES[:complete]), cut
        assert [("torn line" in str(w.message)) for w in caught] == ([True] if torn else []), cut
        loaded.put("new", "after the cut")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = ResponseCache(path)
        assert dict(again._answers) == dict(ENTRIES[:complete]) | {"new": "after the cut"}, cut


def test_a_corrupt_row_that_is_json_is_refused_with_its_line(tmp_path):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"key": "a", "content": "x"}\n{"key": "b", "label": 1}\n')
    with pytest.raises(ValueError, match="line 2 is not an LLM cache row"):
        ResponseCache(path)
    with pytest.raises(ValueError, match="is not a file"):
        ResponseCache(tmp_path)


KILLED_WRITER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("client", sys.argv[1])
client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(client)
cache = client.ResponseCache(sys.argv[2])
print("ready", flush=True)
k = 0
while True:
    cache.put(f"{sys.argv[3]}-{k}", f"{sys.argv[3]}-{k}:" + "é" * 200_000)
    k += 1
"""


def test_cache_survives_sigkill_during_appends(tmp_path):
    # before: 4 of 15 kills left a cache that refused to load. End to end with real kills; now each append is
    # one write, so kills rarely tear a line: torn lines at every byte are covered by the test above
    import motivegym.reward_layers.llm.client as client_module

    path, script = tmp_path / "cache.jsonl", tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    rng = random.Random(0)
    for round_ in range(6):
        writer = subprocess.Popen([sys.executable, str(script), client_module.__file__, str(path), f"r{round_}"], stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.4))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            answers = ResponseCache(path)._answers
        assert all(content == f"{key}:" + "é" * 200_000 for key, content in answers.items())
    assert len(answers) > 0
