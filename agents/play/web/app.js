// The page: one game against the bot over the JSON API of agents/play/server.py.
"use strict";

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const DRAW = 104, TAKE = 105, PASS = 106, BIG_GIN = 107, KNOCK = 52;
let game = null;          // {id, state}
let knocking = false;     // the next card clicked knocks
let selected = -1;        // keyboard-selected card (-1: none until an arrow key picks one)
let shownResults = 0;     // results already shown in the overlay

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------- the language
// The phrases come from the server (agents/play/lang.py owns them): English, Dutch, Norwegian.
let words = {};
function T(key, fields = {}) {
  return (words[key] || key).replace(/\{(\w+)\}/g, (_, k) => fields[k]);
}
function chosenLang() {
  const asked = new URLSearchParams(location.search).get("lang");
  let kept = null;
  try { kept = localStorage.getItem("ginenv.lang"); } catch (e) { /* storage off */ }
  const browser = (navigator.language || "en").slice(0, 2);
  const guess = { nl: "nl", nb: "no", nn: "no", no: "no" }[browser] || "en";
  return [asked, kept, guess].find((l) => ["en", "nl", "no"].includes(l));
}
async function setLang(lang) {
  words = await api("GET", `/api/text/${lang}`);
  document.documentElement.lang = lang;
  $("lang").value = lang;
  try { localStorage.setItem("ginenv.lang", lang); } catch (e) { /* storage off */ }
  document.querySelectorAll("[data-t]").forEach((el) => { el.textContent = T(el.dataset.t); });
  document.title = `${T("title")} ${T("against")}`;
  if (game) render([]);
}
const RANKS = "A23456789TJQK", SUIT_ORDER = "shdc";  // ginenv.cards: id = suit * 13 + rank
const cardName = (id) => RANKS[id % 13] + SUIT_ORDER[Math.floor(id / 13)];
function moveLabel(action) {
  if (action === null || action === undefined) return T("mv_knock");  // a knock whose card is not shown yet
  if (action < KNOCK) return T("mv_discard", { card: cardName(action) });
  if (action < DRAW) return T("mv_knock_with", { card: cardName(action - KNOCK) });
  return T({ [DRAW]: "mv_draw", [TAKE]: "mv_take", [PASS]: "mv_pass", [BIG_GIN]: "mv_big_gin" }[action]);
}
const whoName = (p) => (p === "human" ? T("you") : T("bot"));

// Card faces: the SVG-cards deck (LGPL-2.1, static/cards/), one symbol a card.
const FACE_SUITS = { s: "spade", h: "heart", d: "diamond", c: "club" };
const FACE_RANKS = { A: "1", T: "10", J: "jack", Q: "queen", K: "king" };
const faceId = (card) => `${FACE_SUITS[card.slice(-1)]}_${FACE_RANKS[card.slice(0, -1)] || card.slice(0, -1)}`;

function cardEl(card, opts = {}) {
  const el = document.createElement(opts.button ? "button" : "div");
  const rank = card.slice(0, -1), suit = card.slice(-1);
  el.className = "card" + (suit === "h" || suit === "d" ? " red" : "") + (opts.small ? " small" : " face");
  el.dataset.card = card;
  el.innerHTML = `<span class="rank">${rank === "T" ? "10" : rank}</span><span class="suit">${SUITS[suit]}</span>` +
    (opts.small ? "" : `<svg viewBox="0 0 169.075 244.64" aria-hidden="true"><use href="/static/cards/svg-cards.svg#${faceId(card)}"/></svg>`);
  el.setAttribute("aria-label", card);
  return el;
}

// Which results the person has seen, kept per game across reloads (a reload while a
// hand's result is open shows it again).
const seenKey = (gid) => `ginenv.seen.${gid}`;
function markSeen(n) {
  shownResults = n;
  try { localStorage.setItem(seenKey(game.id), String(n)); } catch (e) { /* storage off: this tab only */ }
}
function seenBefore(gid, s) {
  let v = null;
  try { v = localStorage.getItem(seenKey(gid)); } catch (e) { /* storage off */ }
  return v === null ? Math.max(0, (s.hands_played || 0) - 1) : Number(v);
}

async function api(method, path, body) {
  document.body.dataset.pending = "1";
  try {
    const res = await fetch(path, {
      method, headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  } finally {
    document.body.dataset.pending = "0";
  }
}

function legal(id) { return game.state.legal_actions.some((a) => a.id === id); }

async function newGame(ask = true) {
  // A match in play is not thrown away without asking.
  if (ask && game && !game.state.over && (game.state.hands_played || game.state.moves.some((m) => m.player === "human"))
      && !confirm(T("abandon"))) return;
  shownResults = 0;
  knocking = false;
  game = await api("POST", "/api/games", { mode: $("mode").value, opponent: $("opponent").value, rules: $("rules").value });
  history.replaceState(null, "", "?game=" + encodeURIComponent(game.id));  // a reload resumes it
  $("log").innerHTML = "";
  $("news").textContent = "";
  render(game.state.bot_moves);
}

async function resume() {
  // The game id in the URL: the same match after a reload (or on another tab).
  const gid = new URLSearchParams(location.search).get("game");
  if (!gid) return newGame(false);
  try {
    const out = await api("GET", `/api/games/${encodeURIComponent(gid)}`);
    game = { id: out.id, state: out.state };
    shownResults = seenBefore(out.id, out.state);
    $("mode").value = out.state.mode;
    render(lastBotMoves(out.state));  // the bubble of the bot's last moves, as before the reload
  } catch (e) {
    await newGame(false);
    $("prompt").textContent = T("gone", { error: e.message });
  }
}

async function play(action) {
  if (!game) return;
  if (!legal(action)) { explain(action); return; }
  knocking = false;
  $("hint-box").textContent = "";
  // A bot that thinks (the expert level searches): a sign once the answer takes a moment.
  const thinking = setTimeout(() => { $("prompt").textContent = T("thinking"); }, 150);
  try {
    const before = positions();
    const out = await api("POST", `/api/games/${game.id}/actions`, { action });
    clearTimeout(thinking);
    game = { id: out.id, state: out.state };
    render(out.bot_moves);
    lastBotSeconds = out.bot_seconds || 0;
    if (lastBotSeconds >= 0.1 && $("news").textContent) {
      $("news").textContent += " " + T("thought", { s: out.bot_seconds.toFixed(1) });
    }
    animate(before, action, out.bot_moves || []);
  } catch (e) {
    clearTimeout(thinking);
    $("prompt").textContent = e.message;
  }
}

let lastBotSeconds = 0;  // how long the bot thought over its last moves (the server says)

function lastBotMoves(s) {
  // The bot's last run of moves in this hand's log (what the bubble showed before the
  // reload: the person may have drawn since, which leaves the bubble as it was).
  let i = s.moves.length - 1;
  while (i >= 0 && s.moves[i].player !== "bot") i--;
  const out = [];
  for (; i >= 0 && s.moves[i].player === "bot"; i--) out.unshift({ hand: s.hand_no, action: s.moves[i].action });
  return out;
}

function render(botMoves) {
  const s = game.state;
  $("scores").innerHTML = "";
  const b = document.createElement("b");
  b.textContent = T("scores", { you: s.scores.human, bot: s.scores.bot });
  const sub = document.createElement("span");
  sub.className = "sub";
  sub.textContent = ` ${T("score_sub", { target: s.target, hand: s.hand_no })} · ${s.dealer === "human" ? T("you_deal") : T("bot_deals")}`;
  $("scores").append(b, sub);
  $("bot-count").textContent = T("n_cards", { n: s.opponent_cards });
  $("bot-hand").innerHTML = "";
  for (let i = 0; i < s.opponent_cards; i++) {
    const b = document.createElement("div");
    b.className = "card back";
    $("bot-hand").appendChild(b);
  }
  const known = $("bot-known");
  known.innerHTML = "";
  if (s.opponent_took.length) {
    known.append(T("took_holds") + " ");
    s.opponent_took.forEach((c) => known.appendChild(cardEl(c, { small: true })));
  }
  $("stock-size").textContent = s.stock_size;
  $("stock").classList.toggle("off", !legal(DRAW));
  const pile = $("pile");
  pile.innerHTML = "";
  const count = document.createElement("span");  // the phrase with the pile's size in its own span
  count.id = "pile-size";
  count.textContent = s.discard_pile.length;
  const [before, after] = T("pile_all", { n: "\u0000" }).split("\u0000");
  $("pile-summary").replaceChildren(before, count, after || "");
  const list = $("pile-list");
  list.innerHTML = "";
  s.discard_pile.forEach((c) => list.appendChild(cardEl(c, { small: true })));
  const shown = s.discard_pile.slice(-6);
  shown.forEach((c, i) => {
    const el = cardEl(c, { button: i === shown.length - 1 });
    if (i === shown.length - 1) {
      el.id = "top";
      el.classList.toggle("off", !legal(TAKE));
      el.title = "take it (T)";
      el.onclick = () => play(TAKE);
    } else el.classList.add("under");
    pile.appendChild(el);
  });
  if (botMoves && botMoves.length) {  // the bot's moves, hand by hand (a new hand's apart)
    const hands = [...new Set(botMoves.map((m) => m.hand))];
    $("news").textContent = hands.map((h) => (hands.length > 1 ? `${T("this_hand", { n: h })}: ` : "") + `${T("bot")}: ` +
      botMoves.filter((m) => m.hand === h).map((m) => moveLabel(m.action)).join(", ")).join(" · ");
  }
  // your hand, sorted into melds
  const hand = $("hand");
  hand.innerHTML = "";
  const groups = s.arrangement.melds.map((m) => ({ cards: m, meld: true }))
    .concat(s.arrangement.deadwood_cards.length ? [{ cards: s.arrangement.deadwood_cards, meld: false }] : []);
  let index = 0;
  for (const g of groups) {
    const box = document.createElement("div");
    box.className = "group" + (g.meld ? " meld" : "");
    for (const c of g.cards) {
      const id = cardId(c);
      const el = cardEl(c, { button: true });
      const can = knocking ? legal(KNOCK + id) : legal(id) || legal(KNOCK + id);
      el.classList.toggle("off", !can);
      el.setAttribute("aria-disabled", String(!can));
      el.dataset.index = index++;
      if (c === s.taken) el.classList.add("taken");
      if (c === s.drawn) { el.classList.add("drawn"); el.title = "you drew this card"; }
      if (knocking && legal(KNOCK + id)) el.classList.add("knockable");
      el.onclick = () => play(knocking ? KNOCK + id : id);
      box.appendChild(el);
    }
    hand.appendChild(box);
  }
  $("deadwood").textContent = T("deadwood", { n: s.arrangement.deadwood });
  selected = Math.min(selected, index - 1);
  markSelected();
  $("draw").disabled = !legal(DRAW);
  $("take").disabled = !legal(TAKE);
  $("pass").disabled = !legal(PASS);
  $("biggin").disabled = !legal(BIG_GIN);
  $("knock").disabled = !s.legal_actions.some((a) => a.id >= KNOCK && a.id < DRAW);
  $("knock").classList.toggle("on", knocking);
  $("hint").disabled = s.to_move !== "human";
  $("prompt").classList.remove("warn");
  $("prompt").textContent = s.over ? T("p_over") : knocking ? T("p_knock") : prompt(s);
  const log = $("log");
  $("log-title").textContent = T("this_hand", { n: s.hand_no });
  log.innerHTML = "";
  s.moves.forEach((m) => {
    const li = document.createElement("li");
    li.textContent = `${whoName(m.player)}: ${moveLabel(m.action)}`;
    log.appendChild(li);
  });
  log.scrollTop = log.scrollHeight;  // the newest move in sight
  drawSheet(s);
  if (s.result && (s.hands_played || 0) > shownResults) showResult(s.result, s);
}

function explain(action) {
  // Why a click or key does nothing now, in the prompt line.
  const s = game.state;
  const card = action < DRAW ? s.hand.find((c) => cardId(c) === action % KNOCK) : null;
  let why;
  if (s.over) why = T("w_over");
  else if (s.to_move !== "human") why = T("w_wait");
  else if (legal(PASS)) why = action === DRAW ? T("w_offer_draw") : T("w_offer");
  else if (legal(DRAW) && !legal(TAKE)) why = T("w_forced_draw");
  else if (legal(DRAW)) why = T("w_draw_first");
  else if (action === DRAW || action === TAKE || action === PASS) why = T("w_drawn");
  else if (action === BIG_GIN) why = T("w_big_gin");
  else if (card && card === s.taken) why = T("w_taken", { card });
  else if (action === -1) why = T("w_no_knock", { limit: s.knock_limit });
  else if (action >= KNOCK && action < DRAW) why = T("w_knock_card", { card, limit: s.knock_limit });
  else why = T("w_illegal");
  const p = $("prompt");
  p.textContent = why;
  p.classList.add("warn");
}

function drawSheet(s) {
  // The score sheet: each hand's points, the running totals, and at the end the bonuses.
  const body = $("sheet-body");
  body.innerHTML = "";
  const run = { human: 0, bot: 0 };
  const row = (cells, cls) => {
    const tr = document.createElement("tr");
    if (cls) tr.className = cls;
    cells.forEach((c) => { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); });
    body.appendChild(tr);
  };
  for (const h of s.sheet || []) {
    run.human += h.human; run.bot += h.bot;
    const kind = T("k_" + (h.kind === "truncated" ? "dead" : h.kind));
    row([h.hand, h.human ? `+${h.human}` : "", h.bot ? `+${h.bot}` : "", kind]);
  }
  row(["", run.human, run.bot, T("total")], "total");
  const m = s.result && s.result.match;
  if (m && s.over) {
    for (const [key, name] of [["game", "game_bonus"], ["line", "line_bonus"], ["shutout", "shutout"]]) {
      const a = m.bonus_parts.human[key], b = m.bonus_parts.bot[key];
      if (a || b) row(["", a ? `+${a}` : "", b ? `+${b}` : "", T(name)], "bonus");
    }
    row(["", m.final.human, m.final.bot, T("final")], "total");
  }
  $("sheet-box").hidden = !(s.sheet || []).length;
}

// ------------------------------------------------------------ card movement
function positions() {
  // Where each card, the stock and the bot's hand are on screen before a move.
  const out = { cards: {}, stock: $("stock").getBoundingClientRect(), bot: $("bot-hand").getBoundingClientRect() };
  document.querySelectorAll("#hand .card, #pile .card").forEach((el) => { out.cards[el.dataset.card] = el.getBoundingClientRect(); });
  return out;
}

function animate(before, action, botMoves) {
  // Each card of the hand and the pile slides from where it was (the stock for a drawn
  // card, the bot's hand for the bot's discards) to where it is now.
  const moved = [];
  if (window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
  const botThrew = new Set(botMoves.filter((m) => m.action !== null && m.action < DRAW).map((m) => cardName(m.action % KNOCK)));
  document.querySelectorAll("#hand .card, #pile .card").forEach((el) => {
    const now = el.getBoundingClientRect();
    const from = before.cards[el.dataset.card] ||
      (el.closest("#hand") ? (action === DRAW ? before.stock : null) : (botThrew.has(el.dataset.card) ? before.bot : null));
    if (!from) return;
    const dx = from.left - now.left, dy = from.top - now.top;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) return;
    el.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }],
      { duration: 280, easing: "cubic-bezier(.2,.7,.3,1)" });
    moved.push(el.dataset.card);
  });
  document.body.dataset.moved = moved.join(" ");  // the cards that moved (for tests and tools)
}

function prompt(s) {
  if (s.to_move !== "human") return "";
  if (legal(PASS)) return T("p_offer");
  if (legal(DRAW)) return T("p_draw");
  return T("p_discard");
}

function cardId(card) {
  return SUIT_ORDER.indexOf(card.slice(-1)) * 13 + RANKS.indexOf(card.slice(0, -1));
}

function showResult(r, s) {
  const who = { human: T("you"), bot: T("the_bot_who") };
  const kind = r.kind === "undercut" && r.knocker === "human" ? "undercut_you" : r.kind;
  const title = r.kind === "dead" || r.kind === "truncated" ? T("r_dead") : T("r_" + kind, { who: who[r.knocker] });
  $("result-title").textContent = T("r_hand", { n: r.hand, title });
  const body = $("result-body");
  body.innerHTML = "";
  for (const p of ["human", "bot"]) {
    const row = document.createElement("div");
    row.className = "result-row";
    row.dataset.player = p;
    row.append(`${who[p]}: `);
    const a = r.hands[p];
    a.melds.forEach((m) => {
      const g = document.createElement("span");
      g.className = "group meld";
      m.forEach((c) => g.appendChild(cardEl(c, { small: true })));
      row.appendChild(g);
    });
    const d = document.createElement("span");
    d.className = "group";
    a.deadwood_cards.forEach((c) => d.appendChild(cardEl(c, { small: true })));
    row.appendChild(d);
    row.append(" " + T("r_row", { d: a.deadwood, p: r.points[p] }));
    body.appendChild(row);
  }
  if (r.knock_card) {
    const k = document.createElement("p");
    k.className = "knock-card";
    k.textContent = T("r_knock_card", { who: who[r.knocker], card: r.knock_card });
    body.appendChild(k);
  }
  if (r.rearranged) {
    const k = document.createElement("p");
    k.textContent = T("r_rearranged");
    body.appendChild(k);
  }
  if (r.layoffs.length) {
    const lay = document.createElement("p");
    lay.textContent = T("r_laid_off") + r.layoffs.map((l) => T("r_onto", { card: l.card, meld: l.onto.join(" ") })).join("; ");
    body.appendChild(lay);
  }
  const total = document.createElement("p");
  total.className = "running";
  total.textContent = T("r_score", { you: s.scores.human, bot: s.scores.bot, target: s.target });
  body.appendChild(total);
  if (r.match) {
    const m = document.createElement("p");
    m.className = "match";
    const winner = r.match.winner === "human" ? T("m_you") : r.match.winner === "bot" ? T("m_bot") : T("m_draw");
    m.textContent = `${winner} ${T("m_final", { you: r.match.final.human, bot: r.match.final.bot, by: r.match.bonuses.human, bb: r.match.bonuses.bot })}`;
    body.appendChild(m);
  }
  $("next").textContent = s.over ? T("new_game") : T("next_hand");
  $("result").hidden = false;
  $("result").querySelectorAll(".result-row .card").forEach((el, i) =>
    el.animate([{ transform: "rotateY(90deg)" }, { transform: "none" }], { duration: 260, delay: 20 * i, fill: "backwards" }));
  $("next").focus();
}

// ---------------------------------------------------------------- the replay
let replay = null;  // {hand (from the record), step}

async function openReplay() {
  const out = await api("GET", `/api/games/${game.id}/record`);
  const hands = out.record.hands;
  if (!hands.length) return;
  replay = { hand: hands[hands.length - 1], step: 0 };
  $("result").hidden = true;
  $("replay").hidden = false;
  drawReplay();
}

function pileAfter(hand, step) {
  // The discard pile after the first `step` moves: discards go on it, a take lifts the top.
  const pile = [hand.upcard];
  hand.moves.slice(0, step).forEach((m) => {
    if (m.action !== null && m.action < DRAW) pile.push(cardName(m.action % KNOCK));  // a discard, or the knock card
    else if (m.action === TAKE) pile.pop();
  });
  return pile;
}

function drawReplay() {
  const h = replay.hand, n = h.moves.length;
  $("replay-title").textContent = T("replay_title", { n: h.result.hand, kind: T("k_" + (h.result.kind === "truncated" ? "dead" : h.result.kind)) });
  const box = $("replay-hands");
  box.innerHTML = "";
  for (const p of ["human", "bot"]) {
    const row = document.createElement("div");
    row.className = "result-row";
    row.append(`${whoName(p)}: `);
    const a = h.result.hands[p];
    a.melds.concat([a.deadwood_cards]).forEach((m, i) => {
      const g = document.createElement("span");
      g.className = "group" + (i < a.melds.length ? " meld" : "");
      m.forEach((c) => g.appendChild(cardEl(c, { small: true })));
      row.appendChild(g);
    });
    box.appendChild(row);
  }
  $("replay-where").textContent = T("replay_where", { i: replay.step, n });
  const m = replay.step > 0 ? h.moves[replay.step - 1] : null;
  $("replay-move").textContent = m ? `${whoName(m.player)}: ${moveLabel(m.action)}` : T("replay_deal", { card: h.upcard });
  const pile = $("replay-pile");
  pile.innerHTML = "";
  pileAfter(h, replay.step).forEach((c) => pile.appendChild(cardEl(c, { small: true })));
  const list = $("replay-moves");
  list.innerHTML = "";
  h.moves.forEach((mv, i) => {
    const li = document.createElement("li");
    li.textContent = `${whoName(mv.player)}: ${moveLabel(mv.action)}`;
    if (i === replay.step - 1) li.className = "now";
    list.appendChild(li);
  });
  $("replay-prev").disabled = replay.step === 0;
  $("replay-next").disabled = replay.step === n;
}

$("replay-open").onclick = openReplay;
$("replay-prev").onclick = () => { replay.step = Math.max(0, replay.step - 1); drawReplay(); };
$("replay-next").onclick = () => { replay.step = Math.min(replay.hand.moves.length, replay.step + 1); drawReplay(); };
$("replay-close").onclick = () => { $("replay").hidden = true; $("result").hidden = false; };

function closeResult() {
  markSeen(game.state.hands_played || 0);
  $("result").hidden = true;
  if (game.state.over) newGame();
}

async function showHint() {
  if (!game || game.state.to_move !== "human") return;
  try {
    // Against the expert level the hint is the expert's: the moves played out by its search.
    const expert = $("opponent").value === "expert";
    if (expert) $("hint-box").textContent = "…";
    const out = await api("GET", `/api/games/${game.id}/hint${expert ? "?search=true" : ""}`);
    const signed = (v) => (v >= 0 ? "+" : "") + v.toFixed(1);
    const match = out.hint.length > 0 && out.hint[0].unit === "match"; // the person's chance to win the match
    const worth = (h) => (match ? `${Math.round(h.value * 100)}%` : signed(h.value));
    $("hint-box").textContent = expert
      ? T(match ? "expert_would_match" : "expert_would") + out.hint.map((h) => `${moveLabel(h.id)} (${worth(h)})`).join(" · ")
      : T("bot_would") + out.hint.map((h) => `${moveLabel(h.id)} (${Math.round(h.probability * 100)}%)`).join(" · ");
  } catch (e) {
    $("hint-box").textContent = e.message;
  }
}

function markSelected() {
  document.querySelectorAll("#hand .card").forEach((el) => el.classList.toggle("selected", selected >= 0 && +el.dataset.index === selected));
}

$("new").onclick = () => newGame();
$("stock").onclick = () => play(DRAW);
$("draw").onclick = () => play(DRAW);
$("take").onclick = () => play(TAKE);
$("pass").onclick = () => play(PASS);
$("biggin").onclick = () => play(BIG_GIN);
function toggleKnock() {
  if (!knocking && !game.state.legal_actions.some((a) => a.id >= KNOCK && a.id < DRAW)) { explain(-1); return; }
  knocking = !knocking;
  render();
}
$("knock").onclick = toggleKnock;
$("hint").onclick = showHint;
$("next").onclick = closeResult;

document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "SELECT") return;
  if (!$("result").hidden) {
    if (e.key === "Enter" || e.key === "Escape" || e.key === " ") { e.preventDefault(); closeResult(); }
    return;
  }
  const cards = [...document.querySelectorAll("#hand .card")];
  const key = e.key.toLowerCase();
  if (key === "d") play(DRAW);
  else if (key === "t") play(TAKE);
  else if (key === "p") play(PASS);
  else if (key === "b") play(BIG_GIN);
  else if (key === "k") toggleKnock();
  else if (key === "h") showHint();
  else if (key === "n") newGame();
  else if (e.key === "ArrowRight") { selected = Math.min(selected + 1, cards.length - 1); markSelected(); }
  else if (e.key === "ArrowLeft") { selected = Math.max(selected - 1, 0); markSelected(); }
  else if (e.key === "Enter" && cards[selected]) { cards[selected].click(); }
  else if (e.key === "Escape") { knocking = false; render(); }
});

$("lang").onchange = () => setLang($("lang").value);
setLang(chosenLang()).then(resume);
