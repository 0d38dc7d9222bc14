"""Playing the bot: the one game loop, the terminal (piped), the HTTP API on a real
uvicorn server, and the page in a real headless Chromium."""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import cards_in, live_server, seen_discards, visible_cards

from agents import make_agent
from agents.play.game import Game, parse_move
from ginenv import actions as A
from ginenv.cards import format_card, parse_cards
from ginenv.worlds import resample_hidden

ROOT = Path(__file__).parent.parent


def first_legal(game):
    return game.legal_actions()[0]["id"]


def random_legal(rng):
    return lambda game: int(rng.choice([a["id"] for a in game.legal_actions()]))


def play_out(game, choose):
    while not game.over:
        game.play(choose(game))
    return game


# ---------------------------------------------------------------- the game loop
@pytest.mark.parametrize("seat", [0, 1])
def test_full_matches_through_the_loop_add_up(seat):
    rng = np.random.default_rng(seat)
    for seed in range(4):
        game = play_out(Game(make_agent("knock_early"), "standard", "match", seed, seat), random_legal(rng))
        s = game.state
        totals = {"human": 0, "bot": 0}
        for r in game.results:
            for who in totals:
                totals[who] += r["points"][who]
        assert totals == game.view()["scores"] == {"human": int(s.scores[0, seat]), "bot": int(s.scores[0, 1 - seat])}
        final = game.results[-1]["match"]
        assert max(totals.values()) >= 100
        assert final["final"]["human"] == int(s.final_scores[0, seat])
        assert final["winner"] == {seat: "human", 1 - seat: "bot"}.get(int(s.winner[0]))


def test_an_illegal_move_is_refused_and_changes_nothing():
    game = Game(make_agent("gin_hunter"), seed=5)
    before = json.dumps(game.view())
    for bad in (A.DRAW_STOCK if A.PASS in {a["id"] for a in game.legal_actions()} else A.PASS, 999, "105", 105.0, None):
        with pytest.raises(ValueError, match="illegal action|not your move"):
            game.play(bad)
        assert json.dumps(game.view()) == before


@pytest.mark.parametrize("seat", [0, 1])
def test_the_view_never_holds_a_card_the_person_has_not_seen(seat):
    rng = np.random.default_rng(10 + seat)
    checked = 0
    for seed in range(6):
        game = Game(make_agent("knock_early"), "standard", "hand", seed, seat)
        while not game.over:
            view = game.view()
            shown = set(
                re.findall(r'"([AT2-9JQK][shdc])"', json.dumps({k: v for k, v in view.items() if k != "result"}))
            )
            assert shown <= visible_cards(game)
            # ... and it is the same in every world that differs in what the person cannot see
            other = Game.__new__(Game)
            other.__dict__.update(game.__dict__)
            other.state = resample_hidden(game.state, seat, rng)
            assert json.dumps(other.view()) == json.dumps(view)
            # The record of a game in play names only what the person has seen too.
            record = game.record()
            assert record["seed"] is None and record["hands"] == []
            named = set(re.findall(r"\b([AT2-9JQK][shdc])\b", json.dumps(record)))  # labels too
            assert named <= visible_cards(game) | seen_discards(game), named - visible_cards(game)
            for m in record["in_play"]["moves"]:
                label = m["label"]
                assert m["player"] == "human" or not label.startswith("knock with"), label
            checked += 1
            game.play(random_legal(rng)(game))
    assert checked > 50


def test_typed_moves_read_as_actions_or_say_what_is_legal():
    game = Game(make_agent("knock_early"), seed=2, seat=0)
    legal = game.legal_actions()
    assert parse_move("take", legal) == A.TAKE_DISCARD and parse_move(" PASS ", legal) == A.PASS
    with pytest.raises(ValueError, match="draw from the stock is not legal now; legal: take the discard, pass"):
        parse_move("draw", legal)
    game.play(A.PASS)
    if A.DRAW_STOCK in {a["id"] for a in game.legal_actions()}:  # the bot passed or took: draw
        game.play(A.DRAW_STOCK)
    legal = game.legal_actions()
    card = next(a for a in legal if a["id"] < A.KNOCK)["label"].split()[-1]
    assert parse_move(card, legal) == A.discard(parse_cards(card)[0])
    for bad, message in (
        ("knock", "knock needs the card"),
        ("drwa", "unknown command"),
        ("7x", "bad card"),
        ("", "type a move"),
        ("big gin", "not legal now"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_move(bad, legal)


# ---------------------------------------------------------------- the terminal
def typed(action: int) -> str:
    if action == A.DRAW_STOCK:
        return "draw"
    if action == A.TAKE_DISCARD:
        return "take"
    if action == A.PASS:
        return "pass"
    if action == A.BIG_GIN:
        return "big gin"
    if A.is_knock(action):
        return f"knock {format_card(A.card_of(action))}"
    return format_card(A.card_of(action))


def script(game) -> list:
    """Play ``game`` to its end (knock when it can, else the last move listed) and return
    the typed lines that play it."""
    lines = []
    while not game.over:
        legal = game.legal_actions()
        knocks = [a["id"] for a in legal if A.is_knock(a["id"])]
        action = knocks[0] if knocks else legal[-1]["id"]
        lines.append(typed(action))
        game.play(action)
    return lines


def play_in_terminal(lines, seed, seat, *extra) -> subprocess.CompletedProcess:
    """``python -m agents.play`` against knock_early, the typed ``lines`` piped in."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.play",
            "--opponent",
            "knock_early",
            "--seed",
            str(seed),
            "--seat",
            str(seat),
            *extra,
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_a_whole_match_plays_through_the_terminal_from_a_pipe():
    seed, seat = 11, 1
    script_game = Game(make_agent("knock_early"), "standard", "match", seed, seat)
    lines = ["help", "hint", "nonsense", "9z", *script(script_game)]
    out = play_in_terminal(lines, seed, seat)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    final = script_game.results[-1]["match"]
    assert "=== match over" in text
    assert f"Final: you {final['final']['human']}, bot {final['final']['bot']}" in text
    assert text.count("--- hand") == len(script_game.results)
    assert "? cannot read" in text or "? bad card" in text  # the wrong entries got a message
    assert "legal moves:" in text
    assert text.rstrip().endswith(f"seed {seed}") and text.count("seed") == 1  # the seed only at the end


# ---------------------------------------------------------------- the HTTP API
@pytest.fixture(scope="module")
def server():
    """A real uvicorn server on a free loopback port, the shipped bot as the opponent
    (clients may choose seeds here, so the tests can replay deals)."""
    pytest.importorskip("uvicorn")
    pytest.importorskip("starlette")
    from agents.play.server import make_app

    app = make_app(
        make_agent(str(ROOT / "checkpoints" / "champion")),
        max_games=50,
        idle_seconds=600,
        allow_seed=True,
        creates_per_minute=6000,
    )
    with live_server(app) as url:
        yield url, app


def test_the_api_plays_a_whole_match_against_the_shipped_bot(server):
    httpx = pytest.importorskip("httpx")
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/api/games", json={"seed": 4, "seat": 1, "mode": "match"})
        assert r.status_code == 201
        gid, state = r.json()["id"], r.json()["state"]
        rng = np.random.default_rng(0)
        moves = 0
        while not state["over"]:
            assert state["to_move"] == "human" and state["legal_actions"]
            r = client.post(
                f"/api/games/{gid}/actions", json={"action": int(rng.choice([a["id"] for a in state["legal_actions"]]))}
            )
            assert r.status_code == 200, r.text
            state = r.json()["state"]
            moves += 1
        assert state["result"]["match"]["winner"] in ("human", "bot", None)
        assert client.get(f"/api/games/{gid}").json()["state"] == state
        assert moves > 10


def test_every_answer_names_the_process_that_served_it(server):
    """``X-Served-By`` on every kind of answer (created, read, refused, not found, a
    static file, a gzipped page), the pid of the process serving (here this one)."""
    httpx = pytest.importorskip("httpx")
    import os

    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as client:
        created = client.post("/api/games", json={"seed": 5})
        gid = created.json()["id"]
        answers = [
            created,
            client.get(f"/api/games/{gid}"),
            client.post(f"/api/games/{gid}/actions", json={"action": 9999}),
            client.get("/api/games/nope"),
            client.get("/", headers={"Accept-Encoding": "gzip"}),
            client.get("/api/openapi.json", headers={"Accept-Encoding": "gzip"}),
        ]
    assert [r.status_code for r in answers] == [201, 200, 422, 404, 200, 200]
    assert all(r.headers.get("x-served-by") == str(os.getpid()) for r in answers)
    assert answers[-1].headers.get("content-encoding") == "gzip" and answers[-1].json()["openapi"].startswith("3.1")


def test_the_api_refuses_bad_requests_clearly_and_applies_nothing(server):
    httpx = pytest.importorskip("httpx")
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as client:
        gid = client.post("/api/games", json={"seed": 1}).json()["id"]
        before = client.get(f"/api/games/{gid}").json()
        assert client.get("/api/games/nope").status_code == 404
        assert client.post("/api/games/nope/actions", json={"action": 104}).status_code == 404
        for body, status, message in (
            (b"{not json", 400, "not valid JSON"),
            (b"[104]", 400, "JSON object"),
            (json.dumps({"move": 104}).encode(), 400, '{"action"'),
            (json.dumps({"action": 999}).encode(), 422, "legal actions"),
            (json.dumps({"action": "105"}).encode(), 422, "illegal action"),
            (b"{" + b" " * 5000 + b"}", 413, "at most 4096 bytes"),
        ):
            r = client.post(f"/api/games/{gid}/actions", content=body, headers={"content-type": "application/json"})
            assert r.status_code == status and message in r.json()["error"], (body[:20], r.text)
        r = client.post(f"/api/games/{gid}/actions", json={"action": 999})
        assert r.json()["legal_actions"] == before["state"]["legal_actions"]
        assert client.get(f"/api/games/{gid}").json() == before
        for options, message in (
            ({"opponent": "/etc/passwd"}, "opponent must be"),
            ({"rules": "vegas"}, "rules must"),
            ({"seat": 2}, "seat must be"),
            ({"colour": 1}, "unknown key"),
        ):
            r = client.post("/api/games", json=options)
            assert r.status_code == 400 and message in r.json()["error"], r.text
        hint = client.get(f"/api/games/{gid}/hint").json()["hint"]
        legal = {a["id"] for a in before["state"]["legal_actions"]}
        assert hint and {h["id"] for h in hint} <= legal and abs(sum(h["probability"] for h in hint) - 1) < 1e-3
        # With search: the policy's moves (and the search's own candidates) played out,
        # each with its value; the search's choice first; the same answer when asked again.
        searched = client.get(f"/api/games/{gid}/hint", params={"search": "true"}).json()["hint"]
        assert {h["id"] for h in hint} <= {h["id"] for h in searched} <= legal
        assert all(set(h) == {"id", "label", "probability", "value", "se", "unit"} and h["se"] >= 0 for h in searched)
        assert client.get(f"/api/games/{gid}/hint", params={"search": "1"}).json()["hint"] == searched
        assert client.get(f"/api/games/{gid}/hint", params={"search": "0"}).json()["hint"] == hint
        r = client.get(f"/api/games/{gid}/hint", params={"search": "yes please"})
        assert r.status_code == 400 and "search must be true or false" in r.json()["error"], r.text


def test_the_api_never_sends_a_card_the_person_has_not_seen(server):
    httpx = pytest.importorskip("httpx")
    url, app = server
    rng = np.random.default_rng(7)
    with httpx.Client(base_url=url, timeout=30) as client:
        for seed in range(3):
            r = client.post("/api/games", json={"seed": seed, "mode": "hand", "seat": seed % 2}).json()
            gid, state = r["id"], r["state"]
            game = app.state.games.get(gid)[0]
            while not state["over"]:
                assert cards_in({k: v for k, v in state.items() if k != "result"}) <= visible_cards(game)
                action = int(rng.choice([a["id"] for a in state["legal_actions"]]))
                state = client.post(f"/api/games/{gid}/actions", json={"action": action}).json()["state"]


def test_games_are_bounded_and_idle_ones_expire():
    pytest.importorskip("starlette")
    from starlette.exceptions import HTTPException

    from agents.play.server import Games

    games = Games(make_agent("random"), max_games=2, idle_seconds=0.2, allow_seed=True)
    for _ in range(2):
        games.add(*games.build({"seed": 1}))
    with pytest.raises(HTTPException) as e:
        games.check_room()
    assert e.value.status_code == 503
    time.sleep(0.3)
    games.check_room()  # the idle ones expired
    assert games.store.count() == 0


def test_the_live_games_in_memory_are_bounded_least_recently_used_first():
    """However many games the store holds, at most ``cache_games`` stay live in memory
    (the soak showed a worker's memory growing with every game it served); one dropped
    is rebuilt from its record, the same game."""
    pytest.importorskip("starlette")
    from agents.play.server import Games

    games = Games(make_agent("knock_early"), max_games=50, allow_seed=True, cache_games=3)
    ids = [games.add(*games.build({"seed": k})) for k in range(3)]
    games.get(ids[0])  # used: now the most recent
    ids += [games.add(*games.build({"seed": 3}))]
    assert list(games.cache) == [ids[2], ids[0], ids[3]]  # ids[1] went, the least recently used
    view = Game(make_agent("knock_early"), "standard", "match", 1, 0).view()
    assert games.get(ids[1])[0].view() == view and len(games.cache) == 3  # rebuilt, another one dropped


# ---------------------------------------------------------------- the page
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def with_seed(route, seed: int):
    """A Playwright route that adds ``seed`` to the page's requests for a new game."""
    if route.request.method != "POST":
        return route.continue_()
    body = {**json.loads(route.request.post_data or "{}"), "seed": seed}
    return route.continue_(post_data=json.dumps(body))


def test_a_whole_hand_played_by_clicking_in_headless_chromium(server, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed")
    httpx = pytest.importorskip("httpx")
    url, _ = server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 820})
        # The page's own new games, dealt from a fixed seed: a random deal may end before
        # the person's first click (the bot knocks at once) and leave its result on top.
        page.route("**/api/games", lambda route: with_seed(route, 4))
        page.goto(url + "/")
        page.wait_for_function("document.body.dataset.pending === '0'")
        page.select_option("#mode", "hand")
        page.click("#new")
        page.wait_for_function("document.body.dataset.pending === '0'")
        clicks = 0
        with httpx.Client(base_url=url, timeout=30) as client:
            while page.is_hidden("#result"):
                gid = page.evaluate("game.id")
                state = client.get(f"/api/games/{gid}").json()["state"]
                shown = page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.card)")
                assert sorted(shown) == sorted(state["hand"])
                assert page.inner_text("#stock-size") == str(state["stock_size"])
                ids = [a["id"] for a in state["legal_actions"]]
                knocks = [a for a in ids if A.is_knock(a)]
                if knocks:  # knock when it can: the knock button, then the card
                    page.click("#knock")
                    page.click(f"#hand [data-card='{format_card(A.card_of(knocks[0]))}']")
                elif A.TAKE_DISCARD in ids and A.PASS in ids:
                    page.click("#pass")
                elif A.DRAW_STOCK in ids:
                    page.click("#stock")
                else:  # discard the card that leaves the least deadwood by the page's own click
                    card = format_card(A.card_of(max(a for a in ids if a < A.KNOCK)))
                    page.click(f"#hand [data-card='{card}']")
                page.wait_for_function("document.body.dataset.pending === '0'")
                clicks += 1
                assert clicks < 200
            final = client.get(f"/api/games/{page.evaluate('game.id')}").json()["state"]
        assert final["over"] and final["seed"] == "4" and "Hand 1" in page.inner_text("#result-title")
        rows = page.eval_on_selector_all(".result-row", "els => els.map(e => e.innerText)")
        assert f"{final['result']['points']['human']} points" in rows[0]
        assert f"{final['result']['points']['bot']} points" in rows[1]
        page.screenshot(path=str(tmp_path / "end_of_hand.png"))
        browser.close()
    assert clicks >= 3


# ------------------------------------------------ the terminal game, second round
def play_knock_early(game):
    ke = make_agent("knock_early")
    while not game.over:
        obs, mask = game.observation()
        game.play(int(ke.act(obs[None], mask[None])[0]))
    return game


def test_the_card_drawn_from_the_stock_is_named_until_it_is_discarded():
    game = Game(make_agent("knock_early"), "standard", "hand", 3, 0)
    game.play(A.PASS)
    before = set(game.view()["hand"])
    game.play(A.DRAW_STOCK)
    v = game.view()
    (new,) = set(v["hand"]) - before
    assert v["drawn"] == new and v["taken"] is None
    game.play(A.discard(parse_cards(new)[0]))
    assert game.view()["drawn"] is None


def test_the_knockers_rearranged_melds_are_explained():
    # Seed 196: the bot knocks and its melds at the reveal differ from its least-deadwood
    # arrangement (the house rule); seed 0 ends without that.
    from agents.play.terminal import show_result as text

    moved = play_knock_early(Game(make_agent("knock_early"), "standard", "hand", 196, 0)).results[-1]
    assert moved["rearranged"] and "arranged for its best score" in text(moved)
    plain = [play_knock_early(Game(make_agent("knock_early"), "standard", "hand", s, 0)).results[-1] for s in range(3)]
    for r in plain:
        assert ("arranged for its best score" in text(r)) == bool(r.get("rearranged"))
    assert any(not r.get("rearranged") for r in plain)


def test_ctrl_c_ends_the_terminal_game_without_a_traceback():
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "agents.play", "--opponent", "knock_early"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        # As a person's shell starts it: a suite started in the background (nohup, &)
        # hands its children SIGINT ignored, and Python keeps it ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for line in proc.stdout:  # wait for the prompt's line
        if line.startswith("your move"):
            break
    proc.send_signal(signal.SIGINT)
    # Wait before communicate(), which closes stdin: on a loaded machine the game could
    # read that end of input before Python raises the pending KeyboardInterrupt.
    proc.wait(timeout=60)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "bye" in out and "Traceback" not in err, (out, err)


# ------------------------------------------------ the page, second round
@pytest.fixture
def chromium_page(server):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield browser, server[0]
        browser.close()


def settle(page):
    """Wait for the page's answer and for its cards to stop moving (a click aimed at a
    sliding card would land where it was)."""
    page.wait_for_function(
        "document.body.dataset.pending === '0' && game !== null"
        " && document.getAnimations().every(a => a.playState !== 'running')"
    )


def close_result(page):
    """Close a hand's result if one is open: the page deals at random, and the bot may
    knock on its first move, leaving the result on top before the person's first click."""
    if page.is_visible("#result"):
        page.click("#next")
        settle(page)


def first_moves(page, n):
    for _ in range(n):
        close_result(page)  # a hand ended (the bot knocked): on to the next
        ids = page.evaluate("game.state.legal_actions.map(a => a.id)")
        if A.PASS in ids:
            page.click("#pass")
        elif A.DRAW_STOCK in ids:
            page.click("#stock")
        else:
            page.click(f"#hand [data-card='{format_card(A.card_of(min(a for a in ids if a < A.KNOCK)))}']")
        settle(page)


def new_game_with(page, select: str, value: str) -> None:
    """Choose ``value`` in the page's ``select`` and start a new game (accepting the ask)."""
    close_result(page)
    page.select_option(select, value)
    page.once("dialog", lambda d: d.accept())
    page.click("#new")
    settle(page)


def play_to_result(page):
    """Click through the hand in play (knocking when the page allows) until its result shows."""
    for _ in range(300):
        if not page.is_hidden("#result"):
            return
        ids = page.evaluate("game.state.legal_actions.map(a => a.id)")
        knocks = [a for a in ids if A.is_knock(a)]
        if knocks:
            page.click("#knock")
            page.click(f"#hand [data-card='{format_card(A.card_of(knocks[0]))}']")
            settle(page)
        else:
            first_moves(page, 1)
    raise AssertionError("the hand did not end in 300 moves")


BOT_ENDS_AT_ONCE = 235  # a match deal on which the shipped bot ends the first hand on its first move


def test_a_hand_the_bot_ends_before_the_first_click_shows_its_result_and_play_goes_on(chromium_page):
    """The deal of ``BOT_ENDS_AT_ONCE``: the page opens on the first hand's result (the
    person has not moved), Next closes it on the second hand of the same match, and New
    game then asks before throwing that match away."""
    from agents.play.game import Game

    game = Game(make_agent(str(ROOT / "checkpoints" / "champion")), mode="match", seed=BOT_ENDS_AT_ONCE)
    assert len(game.results) == 1 and not game.over  # the fact the test stands on
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.route("**/api/games", lambda route: with_seed(route, BOT_ENDS_AT_ONCE))
    page.goto(url + "/")
    settle(page)
    assert page.is_visible("#result") and page.evaluate("game.state.hands_played") == 1
    assert not any(m["player"] == "human" for m in page.evaluate("game.state.moves"))
    gid = page.evaluate("game.id")
    page.click("#next")
    settle(page)
    assert page.is_hidden("#result") and page.evaluate("game.id") == gid
    assert page.evaluate("game.state.hand_no") == 2
    asked = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))  # "abandon this match?" - no
    page.click("#new")
    settle(page)
    assert asked and page.evaluate("game.id") == gid


def test_a_reload_mid_match_resumes_the_same_match_and_new_game_asks_first(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    first_moves(page, 4)
    gid, hand = page.evaluate("game.id"), page.evaluate("game.state.hand")
    assert f"game={gid}" in page.url
    page.reload()
    settle(page)
    assert page.evaluate("game.id") == gid and page.evaluate("game.state.hand") == hand
    shown = page.eval_on_selector_all("#hand .card", "els => els.map(e => e.dataset.card)")
    assert sorted(shown) == sorted(hand)
    close_result(page)  # the bot's knock ended a hand in those moves: its result, again
    page.once("dialog", lambda d: d.dismiss())  # "abandon this match?" - no
    page.click("#new")
    settle(page)
    assert page.evaluate("game.id") == gid
    page.once("dialog", lambda d: d.accept())  # yes
    page.click("#new")
    page.wait_for_function(f"game.id !== {json.dumps(gid)}")
    assert f"game={page.evaluate('game.id')}" in page.url


def test_the_log_follows_the_newest_move_and_a_reload_shows_the_bots_last_moves(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    box = "(() => { const l = document.getElementById('log'); return [l.scrollHeight, l.clientHeight, l.scrollTop]; })"
    box += "()"
    for _ in range(60):  # until this hand's log is longer than its box
        height, shown, top = page.evaluate(box)
        if height > shown + 40:
            break
        first_moves(page, 1)
    height, shown, top = page.evaluate(box)
    assert height > shown + 40, "the log never outgrew its box"
    assert top + shown >= height - 1  # scrolled to the newest move
    news = page.inner_text("#news")
    assert "bot" in news.lower(), news  # it shows the bot's last moves
    page.reload()
    settle(page)
    assert page.inner_text("#news") == news  # the bubble of its last moves, as before
    height, shown, top = page.evaluate(box)
    assert top + shown >= height - 1


def test_the_page_fits_a_phone_with_no_horizontal_overflow(chromium_page):
    browser, url = chromium_page
    for width, height, game in ((390, 844, 0), (360, 740, 0), (430, 932, 0), (390, 844, 1), (360, 740, 2)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url + "/")
        settle(page)
        first_moves(page, 3 + 2 * game)  # a discard turn: eleven cards, every button shown
        layout = page.evaluate(
            """() => ({
                scroll: document.documentElement.scrollWidth,
                inner: innerWidth,
                right: Math.max(...[...document.querySelectorAll('button, select, .card')]
                    .map(e => e.getBoundingClientRect().right)),
                // rows from the layout (offsetTop ignores a raised card's transform), a new
                // row where a card sits more than half a card below the previous one
                rows: [...document.querySelectorAll('#hand .card')].map(e => e.offsetTop)
                    .sort((a, b) => a - b)
                    .reduce((n, top, i, tops) => n + (i > 0 && top - tops[i - 1] > 20), 1),
                // how much of each card of the hand shows: up to the next card in its row
                shown: [...document.querySelectorAll('#hand .card')].map((e, i, all) => {
                    const r = e.getBoundingClientRect(), next = all[i + 1]?.getBoundingClientRect();
                    const covered = next && Math.abs(next.top - r.top) < 20 && next.left < r.right;
                    return Math.min(r.right, innerWidth) - r.left - (covered ? r.right - next.left : 0);
                }),
            })"""
        )
        assert layout["scroll"] <= width and layout["right"] <= width + 0.5, (width, layout)
        assert layout["rows"] <= 3, (width, layout)  # the hand in two rows, three when its melds wrap
        # each card wide enough, and uncovered enough, to read the rank in its corner
        assert len(layout["shown"]) >= 10 and min(layout["shown"]) >= 44, (width, layout)
        page.close()


def test_at_1280_the_score_line_is_one_line_and_no_empty_box_shows(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    assert page.inner_text("#pile-summary").lower().startswith("show the whole discard pile (")
    for lang in ("en", "nl", "no"):
        page.select_option("#lang", lang)
        layout = page.evaluate(
            """() => {
                const s = document.querySelector('#scores'), h = document.querySelector('header');
                return {height: s.getBoundingClientRect().height, line: parseFloat(getComputedStyle(s).lineHeight),
                        scroll: h.scrollWidth, width: h.clientWidth, text: s.innerText};
            }"""
        )
        assert layout["text"] and layout["height"] < 1.5 * layout["line"] + 6, (lang, layout)  # one line
        assert layout["scroll"] <= layout["width"], (lang, layout)  # and the header still fits
    # The message bar before the first move: empty, and no box drawn for it.
    page.evaluate("document.querySelector('#news').textContent = ''")
    assert page.evaluate("getComputedStyle(document.querySelector('#news')).backgroundColor") == "rgba(0, 0, 0, 0)"
    page.select_option("#lang", "en")
    page.close()


def test_the_page_offers_each_opponent_and_preset_and_names_the_drawn_card(chromium_page):
    httpx = pytest.importorskip("httpx")
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    options = page.eval_on_selector_all("#opponent option", "els => els.map(e => e.value)")
    assert options == ["bot", "expert", "knock_early", "gin_hunter", "patient", "camper", "marjj", "random"]
    assert "pagat" in page.eval_on_selector_all("#rules option", "els => els.map(e => e.value)")
    close_result(page)
    page.select_option("#opponent", "gin_hunter")
    page.select_option("#rules", "pagat")
    page.once("dialog", lambda d: d.accept())
    page.click("#new")
    settle(page)
    record = httpx.get(f"{url}/api/games/{page.evaluate('game.id')}/record").json()["record"]
    assert record["rules"] == "pagat"  # the page's choice reached the server
    while A.DRAW_STOCK not in page.evaluate("game.state.legal_actions.map(a => a.id)"):
        first_moves(page, 1)
    page.click("#stock")
    settle(page)
    drawn = page.evaluate("game.state.drawn")
    assert drawn and page.eval_on_selector_all("#hand .card.drawn", "els => els.map(e => e.dataset.card)") == [drawn]
    assert page.inner_text("#pile-size") == str(len(page.evaluate("game.state.discard_pile")))


def test_a_finished_hand_replays_move_by_move_with_both_hands(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    new_game_with(page, "#mode", "hand")
    play_to_result(page)
    final_pile = page.evaluate("game.state.discard_pile")
    page.click("#replay-open")
    page.wait_for_selector("#replay:not([hidden])")
    assert len(page.query_selector_all("#replay-hands .result-row")) == 2  # both hands laid out
    n = len(page.query_selector_all("#replay-moves li"))
    assert n >= 3 and page.inner_text("#replay-where") == f"move 0 of {n}"
    for _ in range(n):
        page.click("#replay-next")
    assert page.inner_text("#replay-where") == f"move {n} of {n}" and page.is_disabled("#replay-next")
    shown = page.eval_on_selector_all("#replay-pile .card", "els => els.map(e => e.dataset.card)")
    assert shown == final_pile  # the pile rebuilt move by move ends as the game's


def test_the_terminal_saves_the_games_record_and_replays_it(tmp_path):
    seed, seat = 11, 1
    scripted = Game(make_agent("knock_early"), "standard", "hand", seed, seat)
    lines = script(scripted)
    saved = tmp_path / "game.json"
    common = [sys.executable, "-m", "agents.play", "--opponent", "knock_early", "--mode", "hand"]
    out = subprocess.run(
        [*common, "--seed", str(seed), "--seat", str(seat), "--save", str(saved)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    record = json.loads(saved.read_text())
    assert record == json.loads(json.dumps(scripted.record()))  # the same record the API serves
    shown = subprocess.run([*common, "--load", str(saved)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert shown.returncode == 0 and f"seed {seed}" in shown.stdout
    assert shown.stdout.count(". you: ") == sum(m["player"] == "human" for m in record["hands"][0]["moves"])
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2]")
    bad = subprocess.run([*common, "--load", str(broken)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "not a game record" in bad.stderr


# ------------------------------------------------ the page, third round
def test_the_favicon_is_served_and_the_page_loads_without_a_failed_request(chromium_page):
    httpx = pytest.importorskip("httpx")
    browser, url = chromium_page
    r = httpx.get(url + "/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"] == "image/x-icon" and r.content[:4] == b"\x00\x00\x01\x00"
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    failed = []
    page.on("response", lambda resp: failed.append(resp.url) if resp.status >= 400 else None)
    page.goto(url + "/")
    settle(page)
    page.wait_for_load_state("networkidle")
    assert failed == []


def test_the_cards_have_the_decks_faces_and_none_looks_selected_until_chosen(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    page.wait_for_load_state("networkidle")
    faces = page.eval_on_selector_all(
        "#hand .card",
        "els => els.map(e => [e.dataset.card, e.querySelector('use').getAttribute('href'),"
        " e.querySelector('use').getBBox().width])",
    )
    names = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
    suits = {"s": "spade", "h": "heart", "d": "diamond", "c": "club"}
    assert len(faces) == 10
    for card, href, width in faces:
        assert href == f"/static/cards/svg-cards.svg#{suits[card[-1]]}_{names.get(card[:-1], card[:-1])}"
        assert width > 100  # the deck's symbol was found and drawn (a card is 169 units wide)
    assert page.query_selector_all("#hand .card.selected") == []
    lifted = page.eval_on_selector_all("#hand .card", "els => els.map(e => getComputedStyle(e).transform)")
    assert set(lifted) == {"none"}  # no card drawn raised
    page.keyboard.press("ArrowRight")
    assert len(page.query_selector_all("#hand .card.selected")) == 1


def at_a_draw(chromium_page):
    """A new page, played on to the person's first draw turn."""
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    while not {A.DRAW_STOCK, A.TAKE_DISCARD} <= set(page.evaluate("game.state.legal_actions.map(a => a.id)")):
        first_moves(page, 1)  # on to a draw turn where the pile may be taken (not the forced first draw)
    return page


def test_an_illegal_click_or_key_says_why(chromium_page):
    page = at_a_draw(chromium_page)
    hand = page.evaluate("game.state.hand")
    moves = page.evaluate("game.state.moves.length")
    # aria-disabled cards and stock stay clickable (force: past Playwright's enabled check)
    page.click(f"#hand [data-card='{hand[0]}']", force=True)  # a discard before drawing
    assert "Draw first" in page.inner_text("#prompt") and "warn" in page.get_attribute("#prompt", "class")
    page.keyboard.press("b")
    assert "Draw first" in page.inner_text("#prompt")
    assert page.evaluate("game.state.moves.length") == moves  # nothing was played
    page.keyboard.press("t")  # take the discard: that card may not go straight back
    settle(page)
    taken = page.evaluate("game.state.taken")
    page.click(f"#hand [data-card='{taken}']", force=True)
    assert f"You took {taken} from the pile this turn" in page.inner_text("#prompt")
    page.click("#stock", force=True)
    assert "You have drawn" in page.inner_text("#prompt")
    if not page.evaluate("game.state.legal_actions.some(a => a.id >= 52 && a.id < 104)"):
        page.keyboard.press("k")
        assert "No knock now" in page.inner_text("#prompt")


def test_cards_slide_from_where_they_were(chromium_page):
    page = at_a_draw(chromium_page)
    page.click("#stock")
    settle(page)
    drawn = page.evaluate("game.state.drawn")
    assert drawn in page.evaluate("document.body.dataset.moved").split()  # from the stock into the hand
    card = page.evaluate("game.state.legal_actions.filter(a => a.id < 52).map(a => a.id)")[0]
    name = format_card(card)
    page.click(f"#hand [data-card='{name}']")
    settle(page)
    pile = page.evaluate("game.state.discard_pile")
    if name in pile[-6:]:  # still in sight on the pile (the bot may have taken it)
        assert name in page.evaluate("document.body.dataset.moved").split()


def test_a_reload_while_the_result_is_open_shows_it_again(chromium_page):
    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    play_to_result(page)
    for _ in range(5):  # a hand that ends the match (a gin on a high deadwood) starts a new one
        if not page.evaluate("game.state.over"):
            break
        page.click("#next")
        settle(page)
        play_to_result(page)
    assert not page.evaluate("game.state.over"), "five matches in a row ended in their first hand"
    title = page.inner_text("#result-title")
    page.reload()
    settle(page)
    assert page.is_visible("#result") and page.inner_text("#result-title") == title
    page.click("#next")
    settle(page)
    page.reload()
    settle(page)
    assert page.is_hidden("#result")
    sheet = page.evaluate("game.state.sheet")
    rows = page.eval_on_selector_all("#sheet-body tr", "els => els.map(e => [...e.cells].map(c => c.innerText))")
    assert len(sheet) == 1 and rows[0][0] == "1"
    scores = page.evaluate("game.state.scores")
    assert rows[-1][1:3] == [str(scores["human"]), str(scores["bot"])]


def test_the_score_sheet_ends_with_the_matchs_bonuses(chromium_page):
    """A whole match played over the API (knock when allowed, else the first legal move),
    then the page opened on it: each hand's points, the totals and the bonuses."""
    httpx = pytest.importorskip("httpx")
    browser, url = chromium_page
    with httpx.Client(base_url=url, timeout=30) as client:
        out = client.post("/api/games", json={"mode": "match", "opponent": "knock_early", "seed": 4}).json()
        gid, state = out["id"], out["state"]
        for _ in range(3000):
            if state["over"]:
                break
            ids = [a["id"] for a in state["legal_actions"]]
            move = next((a for a in ids if A.is_knock(a)), None) or (A.DRAW_STOCK if A.DRAW_STOCK in ids else ids[0])
            state = client.post(f"/api/games/{gid}/actions", json={"action": move}).json()["state"]
    assert state["over"]
    m = state["result"]["match"]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/?game={gid}")
    settle(page)
    rows = page.eval_on_selector_all("#sheet-body tr", "els => els.map(e => [...e.cells].map(c => c.innerText))")
    hands = [r for r in rows if r[0]]
    assert [int(r[0]) for r in hands] == list(range(1, len(state["sheet"]) + 1))
    for r, h in zip(hands, state["sheet"]):
        assert (r[1], r[2]) == (f"+{h['human']}" if h["human"] else "", f"+{h['bot']}" if h["bot"] else "")
    labels = [r[3] for r in rows if not r[0]]
    assert labels[0] == "total" and labels[-1] == "final" and "game bonus" in labels
    assert rows[-1][1:3] == [str(m["final"]["human"]), str(m["final"]["bot"])]


@pytest.mark.parametrize("rules", ["standard", "pagat", "wikihow", "casual"])
def test_the_match_bonuses_are_itemised_as_the_rules_list_them(rules):
    """Against a slow reference from the rule book: the game bonus to whoever reached the
    target, a line bonus per hand won, the shutout by the preset's own kind; the parts
    add up to the engine's bonus and the sheet's hands to the running totals."""
    from ginenv.rules import Rules

    r = Rules.preset(rules)
    seen = set()
    for seed in range(40):
        g = play_knock_early(Game(make_agent("knock_early"), rules, "match", seed, seed % 2))
        v = g.view()
        m = v["result"]["match"]
        run = {p: sum(h[p] for h in v["sheet"]) for p in ("human", "bot")}
        assert {p: m["final"][p] - m["bonuses"][p] for p in run} == run
        leader = max(run, key=run.get)
        other = "bot" if leader == "human" else "human"
        won = {p: sum(h[p] > 0 for h in v["sheet"]) for p in run}
        clean = won[leader] == len(v["sheet"])  # every hand won, none dead
        shutout = {
            "double_hand_points": run[leader] if clean else 0,
            "loser_scoreless": r.shutout_bonus if run[other] == 0 else 0,
            "loser_won_no_hand": r.shutout_bonus if won[other] == 0 else 0,
            "none": 0,
        }[r.shutout]
        parts = m["bonus_parts"]
        assert parts[leader] == {"game": r.game_bonus, "line": r.line_bonus * won[leader], "shutout": shutout}
        assert parts[other] == {"game": 0, "line": r.line_bonus * won[other], "shutout": 0}
        seen.add(shutout > 0)
    if r.shutout != "none":
        assert seen == {True, False}, rules  # both kinds of ending met


@pytest.mark.parametrize("lang", ["nl", "no"])
def test_the_terminal_answers_a_mistyped_move_in_its_language(lang):
    from agents.play.lang import phrase

    out = play_in_terminal(["drwa", phrase(lang, "c_knock"), "7h 8h 9h", phrase(lang, "c_quit")], 11, 1, "--lang", lang)
    assert out.returncode == 0, out.stderr
    commands = phrase(lang, "t_type")
    said = [line for line in out.stdout.splitlines() if "? " in line]
    assert len(said) == 3, out.stdout
    assert said[0].endswith(phrase(lang, "e_unknown", word="drwa", commands=commands))
    assert said[1].endswith(phrase(lang, "e_needs_card", word=phrase(lang, "c_knock")))
    assert said[2].endswith(phrase(lang, "e_unreadable", text="7h 8h 9h", commands=commands))
    assert not any(english in out.stdout for english in ("unknown command", "needs the card", "cannot read"))


@pytest.mark.parametrize(
    "lang, words, expect",
    [
        ("nl", {"draw": "trek", "take": "pak", "pass": "pas", "knock": "klop", "help": "hulp"}, "=== partij voorbij"),
        ("no", {"draw": "trekk", "take": "ta", "pass": "pass", "knock": "bank", "help": "hjelp"}, "=== kampen er over"),
    ],
)
def test_the_terminal_plays_a_match_in_dutch_and_norwegian(lang, words, expect):
    """The moves typed in the language's own words give the English game's result,
    told in that language."""
    from agents.play.lang import phrase

    seed, seat = 11, 1
    script_game = Game(make_agent("knock_early"), "standard", "match", seed, seat)
    english = script(script_game)
    lines = [words["help"], *(" ".join([words.get(w, w) for w in line.split(" ", 1)]) for line in english)]
    assert {words["draw"], words["pass"]} <= set(lines)
    out = play_in_terminal(lines, seed, seat, "--lang", lang)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    final = script_game.results[-1]["match"]
    assert expect in text and "? " not in text  # every move was understood
    assert (
        phrase(
            lang,
            "t_match",
            winner=phrase(lang, {"human": "t_you_win", "bot": "t_bot_wins"}[final["winner"]]),
            you=final["final"]["human"],
            bot=final["final"]["bot"],
            by=final["bonuses"]["human"],
            bb=final["bonuses"]["bot"],
        )
        in text
    )
    assert text.count(phrase(lang, "t_legal")) == 1
    assert "your move" not in text and "discard pile" not in text  # nothing left in English


def test_the_page_speaks_dutch_and_norwegian_and_keeps_the_choice(chromium_page):
    from agents.play.lang import move_label, phrase

    browser, url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url + "/")
    settle(page)
    assert page.inner_text("#draw") == "Draw"  # the browser speaks English here
    page.select_option("#lang", "nl")
    page.wait_for_function("document.documentElement.lang === 'nl'")
    assert page.inner_text("#draw") == phrase("nl", "draw") and page.inner_text("#new") == phrase("nl", "new_game")
    first_moves(page, 3)
    moves = page.evaluate("game.state.moves")
    log = page.eval_on_selector_all("#log li", "els => els.map(e => e.innerText)")
    who = {"human": phrase("nl", "you"), "bot": phrase("nl", "bot")}
    assert log == [f"{who[m['player']]}: {move_label('nl', m['action'])}" for m in moves]
    assert page.inner_text("#prompt") in {phrase("nl", k) for k in ("p_offer", "p_draw", "p_discard")}
    page.reload()
    settle(page)
    page.wait_for_function("document.documentElement.lang === 'nl'")  # kept across a reload
    page.goto(url + "/?lang=no&game=" + page.evaluate("game.id"))
    settle(page)
    page.wait_for_function("document.documentElement.lang === 'no'")
    assert page.text_content("[data-t='stock']") == "trekkbunken"


def test_typed_lines_reads_a_pipe_line_by_line_and_wakes_for_ctrl_c_in_any_thread():
    """The terminal's reader: lines written at once come one by one, the last one
    without its newline too, then the end; a string stream is read as it is; and a
    SIGINT that another thread takes ends the wait (a read blocked in the main thread
    would wait for the next line: the helper writes one after 3 s, so the old reader
    returns it instead of raising)."""
    import io
    import os
    import signal
    import threading

    from agents.play.terminal import typed_lines

    r, w = os.pipe()
    os.write(w, b"d 5h\nhint\nkn")
    os.close(w)
    with os.fdopen(r) as stream:
        assert list(typed_lines(stream)) == ["d 5h\n", "hint\n", "kn"]
    assert list(typed_lines(io.StringIO("a\nb\n"))) == ["a\n", "b\n"]

    r, w = os.pipe()

    def interrupt_from_here():
        time.sleep(0.3)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # this thread takes it
        time.sleep(3.0)
        os.write(w, b"too late\n")

    helper = threading.Thread(target=interrupt_from_here)
    # Python's own Ctrl-C handler for the test (an earlier test, the trainer's Ctrl-C, may
    # have left another one installed).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with os.fdopen(r) as stream:
            helper.start()
            start = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                next(typed_lines(stream))
            assert time.monotonic() - start < 2.5
            helper.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    os.close(w)


# ------------------------------------------------ the expert level (search at decision time)
def test_the_expert_level_searches_in_the_api_the_terminal_and_the_page(server, chromium_page):
    """``expert`` is the bot with search: the API plays it and says how long it thought,
    refuses it where the bot is no trained policy, the terminal says it is thinking and
    for how long, and the page shows the time after its moves and the expert's hint."""
    httpx = pytest.importorskip("httpx")
    from agents.play.server import make_app
    from agents.training.search import EXPERT_BUDGET, SearchAgent

    expert = make_agent("expert")
    assert isinstance(expert, SearchAgent) and expert.name.endswith(f"+search={EXPERT_BUDGET}")
    url, app = server
    with httpx.Client(base_url=url, timeout=60) as client:
        r = client.post("/api/games", json={"opponent": "expert", "seed": 3, "mode": "hand"})
        assert r.status_code == 201, r.text
        gid, state = r.json()["id"], r.json()["state"]
        thought = []
        while not state["over"]:
            out = client.post(f"/api/games/{gid}/actions", json={"action": state["legal_actions"][0]["id"]}).json()
            state = out["state"]
            thought.append(out["bot_seconds"])
        assert all(t >= 0 for t in thought) and max(thought) > 0
    with live_server(make_app(make_agent("knock_early"), 5, 60)) as plain_url:
        r = httpx.post(plain_url + "/api/games", json={"opponent": "expert"})
        assert r.status_code == 400 and "needs the server's bot to be a trained policy" in r.text
    proc = subprocess.run(
        [sys.executable, "-m", "agents.play", "--opponent", "expert", "--seed", "5", "--mode", "hand"],
        input="hint\npass\ndraw\n9s\nquit\n",
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert "the bot is thinking..." in proc.stdout and re.search(r"\(the bot thought \d+\.\d\d s\)", proc.stdout)
    assert re.search(r"hint: \w[^\n]* \([+-]\d+\.\d\)", proc.stdout), proc.stdout  # the expert's hint: points
    browser, page_url = chromium_page
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(page_url + "/")
    settle(page)
    new_game_with(page, "#opponent", "expert")
    for _ in range(80):  # until the bot's moves took a tenth of a second or more (a searched decision)
        first_moves(page, 1)
        if page.evaluate("lastBotSeconds") >= 0.1:
            break
    seconds = page.evaluate("lastBotSeconds")
    assert seconds >= 0.1, "no searched move in 80 moves"
    assert f"(it thought {seconds:.1f} s)" in page.inner_text("#news"), page.inner_text("#news")
    # The hint against the expert is the expert's: the moves played out, each with its points.
    close_result(page)
    page.click("#hint")
    page.wait_for_function("document.querySelector('#hint-box').textContent.startsWith('Expert would')")
    gid = page.evaluate("game.id")
    want = httpx.get(f"{page_url}/api/games/{gid}/hint", params={"search": "true"}, timeout=30).json()["hint"]
    shown = page.inner_text("#hint-box")
    # The page's game is a match, which the expert values by the match: each move with the
    # person's chance of winning it, in whole percent.
    assert {h["unit"] for h in want} == {"match"} and all(0 <= h["value"] <= 1 for h in want), want
    assert shown.startswith("Expert would (your chance to win the match, played out): "), shown
    shown_values = [int(v) for v in re.findall(r"\((\d+)%\)", shown)]
    assert len(shown_values) == len(want) and all(  # whole percent (JS rounds halves up, Python to even)
        abs(v - 100 * h["value"]) <= 0.51 for v, h in zip(shown_values, want)
    ), (shown, want)


def test_the_expert_hint_counts_points_in_a_hand_and_the_chance_of_the_match_in_a_match():
    """The hint with search is in the search's unit: a one-hand game's values are points
    (the hand's, the person's minus the bot's), a match's are the person's chance of
    winning it after the hand (the expert values by the match), and its first move is the
    expert's own choice in both."""
    from agents.play.game import HUMAN, hint

    expert = make_agent("expert")
    for mode, unit in (("hand", "points"), ("match", "match")):
        for seed in range(6):
            game = Game(expert, mode=mode, seed=seed)
            if game.to_move == HUMAN and game.observation()[1].sum() > 1:
                break
        obs, mask = game.observation()
        got = hint(game, expert.policy, search=expert)
        assert got and {h["unit"] for h in got} == {unit}, got
        if unit == "match":
            assert all(0 <= h["value"] <= 1 for h in got), got
        else:
            assert not all(0 <= h["value"] <= 1 for h in got), got  # points, not a chance
        chosen = expert.act(obs, mask, state=game.state, seats=np.array([game.seat]))
        assert got[0]["id"] == int(chosen)
    proc = subprocess.run(  # the terminal's match (its default mode) says the chance in whole percent
        [sys.executable, "-m", "agents.play", "--opponent", "expert", "--seed", "5"],
        input="hint\nquit\n",
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert re.search(r"hint: \w[^\n]* \(\d{1,3}% to win the match\)(; |\n)", proc.stdout), proc.stdout
