"""The play server's OpenAPI document (``GET /api/openapi.json``) held to the real routes,
and the real server (uvicorn, the shipped bot) fuzzed from it with schemathesis: requests
generated from the document, one operation at a time and as whole games that follow the
document's links (create, then moves, records, hints). Every answer must be one the
document names (status, content type, body schema), none a 5xx, and none may name a card
the person has not seen. Every schemathesis check runs but one: that a schema-valid body
is accepted, since an action id the schema allows may be illegal in the game's state,
where 422 (the document's answer for it, with the legal moves) is right, and an integer
written with a fraction (``4.0``, an integer to JSON Schema) is refused by design (400)."""

import json
from pathlib import Path

import pytest
from conftest import cards_in, live_server, seen_discards, visible_cards

pytest.importorskip("starlette")
schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import positive_data_acceptance  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.play.server import OPENAPI, make_app  # noqa: E402
from ginenv.baselines import BASELINES  # noqa: E402
from ginenv.rules import PRESETS  # noqa: E402

ROOT = Path(__file__).parent.parent
DOC = json.loads(OPENAPI.read_text())


@pytest.fixture(scope="module")
def api():
    app = make_app(
        make_agent(str(ROOT / "checkpoints" / "champion")),
        max_games=400,
        idle_seconds=600,
        allow_seed=True,  # the document's seed is then valid data
        creates_per_minute=1e6,
    )
    with live_server(app) as url:
        yield url, app


def test_the_document_names_exactly_the_apis_routes_and_methods(api):
    url, app = api
    routes = {
        (r.path, method.lower())
        for r in app.routes
        if getattr(r, "path", "").startswith("/api/")
        for method in (r.methods or ()) - {"HEAD"}
    }
    documented = {(path, method) for path, ops in DOC["paths"].items() for method in ops}
    assert documented == routes
    new = DOC["components"]["schemas"]["NewGame"]["properties"]
    assert new["opponent"]["enum"] == ["bot", "expert", *BASELINES] and new["rules"]["enum"] == list(PRESETS)
    import httpx

    r = httpx.get(url + "/api/openapi.json")
    assert r.status_code == 200 and r.json() == DOC and r.headers["content-type"].startswith("application/json")


class Seen:
    """What the fuzzing sent and got: requests by operation and status."""

    def __init__(self):
        self.calls, self.statuses, self.states = 0, {}, 0


def hidden_card_check(app, seen: Seen):
    """A schemathesis check: a body that shows a game in play names no card the person
    has not seen (the server's own game says which those are)."""

    def no_hidden_card(ctx, response, case):
        seen.calls += 1
        key = (case.operation.label, response.status_code)
        seen.statuses[key] = seen.statuses.get(key, 0) + 1
        if response.status_code >= 300:
            return None
        body = response.json()
        gid = body.get("id") if isinstance(body, dict) else None
        if gid is None:
            return None
        game = app.state.games.get(gid)[0]
        if game.over:
            return None
        if "state" in body:
            seen.states += 1
            shown = cards_in({k: v for k, v in body["state"].items() if k != "result"})
            assert shown <= visible_cards(game), f"hidden cards in the state: {shown - visible_cards(game)}"
        if "record" in body:
            named = cards_in(body["record"])
            assert named <= visible_cards(game) | seen_discards(game), "hidden cards in the record"
        return None

    return no_hidden_card


def test_every_operation_fuzzed_from_the_document_answers_as_documented(api):
    """Each operation with valid and with invalid data (schemathesis' positive and negative
    modes), the game operations both on unknown ids and on a live game's."""
    import httpx

    url, app = api
    schema = schemathesis.openapi.from_url(url + "/api/openapi.json")
    seen = Seen()
    check = hidden_card_check(app, seen)
    live = httpx.post(url + "/api/games", json={"seed": 3}).json()["id"]
    labels = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        labels.add(operation.label)
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            # the live game's id fixed, a GET has nothing left to make invalid
            positive_live = "{gid}" in operation.path and mode == schemathesis.GenerationMode.POSITIVE
            for path_parameters in [None, {"gid": live}] if positive_live else [None]:

                @given(case=operation.as_strategy(mode, path_parameters=path_parameters))
                @settings(
                    max_examples=30,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    database=None,
                    derandomize=True,
                )
                def fuzz(case):
                    case.call_and_validate(additional_checks=[check], excluded_checks=[positive_data_acceptance])

                fuzz()
    # every operation but the document's own (schemathesis leaves that one out)
    assert len(labels) == sum(len(ops) for ops in DOC["paths"].values()) - 1
    assert seen.calls >= 300
    assert not any(status >= 500 for _, status in seen.statuses)
    assert seen.statuses.get(("POST /api/games/{gid}/actions", 422), 0) > 0  # the live game was reached
    print(f"\n{seen.calls} generated requests: {sorted(seen.statuses.items())}")


def test_whole_games_driven_through_the_documents_links_answer_as_documented(api, monkeypatch):
    """Schemathesis' state machine: create a game, then follow the links (moves from the
    state's legal ones and generated ones, records, hints, reads) for many steps. A game
    created with no seed gets the same deal every time here: hypothesis replays sequences
    of calls and demands the same answers to the same calls (with deals from the OS it
    stops, the data generation "flaky")."""
    import secrets
    from types import SimpleNamespace

    from agents.play import server

    monkeypatch.setattr(
        server, "secrets", SimpleNamespace(randbits=lambda bits: 12345, token_urlsafe=secrets.token_urlsafe)
    )
    url, app = api
    schema = schemathesis.openapi.from_url(url + "/api/openapi.json")
    seen = Seen()
    check = hidden_card_check(app, seen)

    class Workflow(schema.as_state_machine()):
        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(
                response,
                additional_checks=[*(additional_checks or ()), check],
                excluded_checks=[positive_data_acceptance],
                transport_kwargs=kwargs,
            )

    Workflow.run(
        settings=settings(
            max_examples=30,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,
        )
    )
    played = sum(n for (label, status), n in seen.statuses.items() if label.endswith("/actions") and status == 200)
    assert not any(status >= 500 for _, status in seen.statuses)
    assert played > 20 and seen.states > 100  # real games moved on, and each state was checked
    print(f"\n{seen.calls} requests in whole games: {sorted(seen.statuses.items())}")
