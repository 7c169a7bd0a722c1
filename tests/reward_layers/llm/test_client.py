import pytest

from motivegym.reward_layers.llm.client import (
    LLMClient,
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    cache_key,
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
