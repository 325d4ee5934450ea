import pytest
pytestmark = pytest.mark.browser
FIELD = '<label>City <input id="city"></label><button id="go" onclick="this.textContent=\'Done\'">Go</button>'

def test_smoke(mao_embed, mao_agent):
    embedded = mao_embed(FIELD, init={"mode": "worker", "authorization": {"level": "full"}}, wait_ready=False)
    page = embedded.page
    msgs = []
    page.on("console", lambda m: msgs.append(m.text))
    session = mao_agent.wait_for_session(url=embedded.url, ready=None, timeout=30)
    result = mao_agent.call(session["sessionId"], "page_inspect")
    print(msgs[-20:])
    assert result["success"], result
    print(result["result"]["elements"])
    ready = page.evaluate("() => MaoChat.ready")
    print(ready)
    assert ready["mode"] == "worker"
