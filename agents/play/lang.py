"""The words of the page and the terminal game in English, Dutch and Norwegian (the
languages of the rule texts this project plays by; their own terms: kloppen, trekstapel,
aflegstapel, aanleggen, dood hout; banke, trekkbunken, kastebunken, restkort, utdeling).

``TEXT[key]`` holds each phrase as ``(en, nl, no)``, with ``{name}`` fields;
``phrase(lang, key, **fields)`` fills one; ``table(lang)`` is one language's phrases
by key (the page fetches it from ``/api/text/<lang>``); ``move_label(lang, action)`` names
a move. Cards keep the project's notation (``7h``, ``Ts``: rank then suit, the way a
move is typed) in every language.
"""

from __future__ import annotations

from ginenv import actions as A
from ginenv.cards import format_card

LANGUAGES = ("en", "nl", "no")
LANGUAGE_NAMES = {"en": "English", "nl": "Nederlands", "no": "Norsk"}

TEXT = {
    # the table
    "title": ("Gin Rummy", "Gin Rummy", "Gin Rummy"),
    "against": ("against the bot", "tegen de bot", "mot boten"),
    "the_bot": ("The bot", "De bot", "Boten"),
    "n_cards": ("({n} cards)", "({n} kaarten)", "({n} kort)"),
    "took_holds": ("took and holds:", "pakte en houdt:", "tok og holder:"),
    "stock": ("stock", "trekstapel", "trekkbunken"),
    "pile_all": ("show the whole discard pile ({n})", "toon de hele aflegstapel ({n})", "vis hele kastebunken ({n})"),
    "your_hand": ("Your hand", "Jouw hand", "Din hånd"),
    "deadwood": ("deadwood {n}", "dood hout {n}", "restkort {n}"),
    "draw": ("Draw", "Trekken", "Trekk"),
    "take": ("Take", "Pakken", "Ta"),
    "pass": ("Pass", "Passen", "Pass"),
    "knock": ("Knock…", "Kloppen…", "Bank…"),
    "big_gin": ("Big gin", "Big gin", "Stor gin"),
    "hint": ("Hint", "Tip", "Tips"),
    "new_game": ("New game", "Nieuw spel", "Nytt spill"),
    "match_to": ("match to 100", "partij tot 100", "kamp til 100"),
    "one_hand": ("one hand", "één ronde", "én utdeling"),
    "opponent_bot": ("the bot", "de bot", "boten"),
    "opponent_expert": ("the bot, expert", "de bot, expert", "boten, ekspert"),
    "thinking": ("the bot is thinking…", "de bot denkt na…", "boten tenker…"),
    "thought": ("(it thought {s} s)", "(dacht {s} s na)", "(tenkte {s} s)"),
    "scores": ("You {you} · Bot {bot}", "Jij {you} · Bot {bot}", "Du {you} · Bot {bot}"),
    "score_sub": ("to {target} · hand {hand}", "tot {target} · ronde {hand}", "til {target} · utdeling {hand}"),
    "you_deal": ("you deal", "jij deelt", "du gir"),
    "bot_deals": ("the bot deals", "de bot deelt", "boten gir"),
    "this_hand": ("Hand {n}", "Ronde {n}", "Utdeling {n}"),
    "you": ("You", "Jij", "Du"),
    "bot": ("Bot", "Bot", "Bot"),
    "keys": (
        "Keys: D draw · T take · P pass · K knock · B big gin · H hint · ←/→ pick a card · Enter discard it · "
        "N new game",
        "Toetsen: D trekken · T pakken · P passen · K kloppen · B big gin · H tip · ←/→ kies een kaart · "
        "Enter afleggen · N nieuw spel",
        "Taster: D trekk · T ta · P pass · K bank · B stor gin · H tips · ←/→ velg et kort · Enter kast det · "
        "N nytt spill",
    ),
    # prompts
    "p_offer": ("Take the upcard or pass.", "Pak de open kaart of pas.", "Ta det åpne kortet eller pass."),
    "p_draw": (
        "Draw from the stock, or take the top discard.",
        "Trek van de trekstapel, of pak de bovenste kaart van de aflegstapel.",
        "Trekk fra trekkbunken, eller ta det øverste kortet i kastebunken.",
    ),
    "p_discard": (
        "Discard a card (click it), or knock.",
        "Leg een kaart af (klik erop), of klop.",
        "Kast et kort (klikk på det), eller bank.",
    ),
    "p_knock": (
        "Knock: click the card to lay face down.",
        "Kloppen: klik op de kaart die je gedekt aflegt.",
        "Bank: klikk på kortet du legger med forsiden ned.",
    ),
    "p_over": ("Game over: start a new one.", "Het spel is uit: begin een nieuw.", "Spillet er over: start et nytt."),
    # why a move is not legal now
    "w_over": (
        "The game is over: start a new one (N).",
        "Het spel is uit: begin een nieuw (N).",
        "Spillet er over: start et nytt (N).",
    ),
    "w_wait": ("Wait: it is the bot's turn.", "Wacht: de bot is aan de beurt.", "Vent: det er botens tur."),
    "w_offer_draw": (
        "First take the upcard (T) or pass (P); then the stock opens.",
        "Pak eerst de open kaart (T) of pas (P); daarna mag je van de trekstapel trekken.",
        "Ta først det åpne kortet (T) eller pass (P); så kan du trekke fra trekkbunken.",
    ),
    "w_offer": (
        "Take the upcard (T) or pass (P) first.",
        "Pak eerst de open kaart (T) of pas (P).",
        "Ta det åpne kortet (T) eller pass (P) først.",
    ),
    "w_draw_first": (
        "Draw first: from the stock (D) or the discard pile (T).",
        "Eerst trekken: van de trekstapel (D) of de aflegstapel (T).",
        "Trekk først: fra trekkbunken (D) eller kastebunken (T).",
    ),
    "w_forced_draw": (
        "Draw from the stock (D): both passed the upcard, so the first draw is from the stock.",
        "Trek van de trekstapel (D): beiden pasten de open kaart, dus de eerste kaart komt van de trekstapel.",
        "Trekk fra trekkbunken (D): begge passet det åpne kortet, så første trekk er fra trekkbunken.",
    ),
    "w_drawn": (
        "You have drawn: now discard a card, or knock.",
        "Je hebt getrokken: leg nu een kaart af, of klop.",
        "Du har trukket: kast et kort nå, eller bank.",
    ),
    "w_big_gin": (
        "Big gin needs all eleven cards in melds.",
        "Voor big gin moeten alle elf kaarten in combinaties liggen.",
        "Stor gin krever at alle elleve kortene er i kombinasjoner.",
    ),
    "w_taken": (
        "You took {card} from the pile this turn: discard another card.",
        "Je pakte {card} deze beurt van de aflegstapel: leg een andere kaart af.",
        "Du tok {card} fra kastebunken denne runden: kast et annet kort.",
    ),
    "w_no_knock": (
        "No knock now: after the discard your ten cards must leave at most {limit} deadwood.",
        "Nu niet kloppen: na het afleggen mogen je tien kaarten hoogstens {limit} dood hout hebben.",
        "Du kan ikke banke nå: etter kastet kan de ti kortene dine ha høyst {limit} i restkort.",
    ),
    "w_knock_card": (
        "You cannot knock with {card}: the other ten cards would leave more than {limit} deadwood.",
        "Je kunt niet kloppen met {card}: de andere tien kaarten hebben dan meer dan {limit} dood hout.",
        "Du kan ikke banke med {card}: de andre ti kortene ville hatt mer enn {limit} i restkort.",
    ),
    "w_illegal": ("That move is not legal now.", "Die zet mag nu niet.", "Det trekket er ikke lov nå."),
    # the end of a hand
    "r_dead": ("A dead hand: nobody scores", "Een dode ronde: niemand scoort", "Død utdeling: ingen får poeng"),
    "r_knock": ("{who} knocked", "{who} klopte", "{who} banket"),
    "r_gin": ("{who} went gin", "{who} maakte gin", "{who} fikk gin"),
    "r_big_gin": ("{who} went big gin", "{who} maakte big gin", "{who} fikk stor gin"),
    "r_undercut": (
        "{who} knocked and was undercut",
        "{who} klopte en kreeg een undercut",
        "{who} banket og ble undercuttet",
    ),
    "r_undercut_you": (
        "You knocked and were undercut",
        "Jij klopte en kreeg een undercut",
        "Du banket og ble undercuttet",
    ),
    "r_tie": (
        "{who} knocked and tied: nobody scores",
        "{who} klopte, gelijkspel: niemand scoort",
        "{who} banket, uavgjort: ingen får poeng",
    ),
    "r_hand": ("Hand {n}: {title}", "Ronde {n}: {title}", "Utdeling {n}: {title}"),
    "the_bot_who": ("The bot", "De bot", "Boten"),
    "r_row": ("deadwood {d} · {p} points", "dood hout {d} · {p} punten", "restkort {d} · {p} poeng"),
    "r_knock_card": (
        "{who} knocked with {card} face down.",
        "{who} klopte met {card} gedekt.",
        "{who} banket med {card} med forsiden ned.",
    ),
    "r_rearranged": (
        "(The knocker's melds are arranged for its best score against the lay-offs.)",
        "(De combinaties van de klopper zijn gelegd voor de beste score tegen het aanleggen.)",
        "(Bankerens kombinasjoner er lagt for best poengsum mot avleggingene.)",
    ),
    "r_laid_off": ("Laid off: ", "Aangelegd: ", "Lagt av: "),
    "r_onto": ("{card} onto {meld}", "{card} aan {meld}", "{card} på {meld}"),
    "r_score": (
        "Score: you {you}, bot {bot} (to {target}).",
        "Stand: jij {you}, bot {bot} (tot {target}).",
        "Stilling: du {you}, bot {bot} (til {target}).",
    ),
    "m_you": ("You win the match!", "Jij wint de partij!", "Du vinner kampen!"),
    "m_bot": ("The bot wins the match.", "De bot wint de partij.", "Boten vinner kampen."),
    "m_draw": ("The match is a draw.", "De partij eindigt gelijk.", "Kampen ble uavgjort."),
    "m_final": (
        "Final: you {you}, bot {bot} (bonuses {by} / {bb}).",
        "Eindstand: jij {you}, bot {bot} (bonussen {by} / {bb}).",
        "Sluttstilling: du {you}, bot {bot} (bonuser {by} / {bb}).",
    ),
    "replay_open": ("Replay this hand", "Deze ronde terugkijken", "Se utdelingen på nytt"),
    "next_hand": ("Next hand", "Volgende ronde", "Neste utdeling"),
    "continue": ("Continue", "Verder", "Fortsett"),
    "replay_title": ("Replay of hand {n}: {kind}", "Ronde {n} terugkijken: {kind}", "Utdeling {n} på nytt: {kind}"),
    "replay_where": ("move {i} of {n}", "zet {i} van {n}", "trekk {i} av {n}"),
    "replay_deal": ("The deal: {card} face up", "Het delen: {card} open", "Utdelingen: {card} med forsiden opp"),
    "discard_pile": ("discard pile", "aflegstapel", "kastebunken"),
    "close": ("Close", "Sluiten", "Lukk"),
    "bot_would": ("Bot would: ", "De bot zou: ", "Boten ville: "),
    "expert_would": (
        "Expert would (points this hand, played out): ",
        "De expert zou (punten deze ronde, uitgespeeld): ",
        "Eksperten ville (poeng denne utdelingen, spilt ut): ",
    ),
    "expert_would_match": (
        "Expert would (your chance to win the match, played out): ",
        "De expert zou (je kans om de partij te winnen, uitgespeeld): ",
        "Eksperten ville (din sjanse til å vinne kampen, spilt ut): ",
    ),
    "abandon": (
        "Abandon this match and start a new one?",
        "Deze partij opgeven en een nieuwe beginnen?",
        "Gi opp denne kampen og starte en ny?",
    ),
    "gone": (
        "That game is gone ({error}): a new one.",
        "Dat spel bestaat niet meer ({error}): een nieuw.",
        "Det spillet finnes ikke lenger ({error}): et nytt.",
    ),
    # the score sheet
    "sheet": ("Score sheet", "Scoreblad", "Poengliste"),
    "s_hand": ("hand", "ronde", "utdeling"),
    "s_you": ("you", "jij", "du"),
    "s_bot": ("bot", "bot", "bot"),
    "k_knock": ("knock", "klop", "bank"),
    "k_gin": ("gin", "gin", "gin"),
    "k_big_gin": ("big gin", "big gin", "stor gin"),
    "k_undercut": ("undercut", "undercut", "undercut"),
    "k_tie": ("tie", "gelijk", "uavgjort"),
    "k_dead": ("dead", "dood", "død"),
    "total": ("total", "totaal", "totalt"),
    "game_bonus": ("game bonus", "spelbonus", "spillbonus"),
    "line_bonus": ("line bonuses", "lijnbonussen", "linjebonuser"),
    "shutout": ("shutout", "shutout", "shutout"),
    "final": ("final", "eindstand", "slutt"),
    # the terminal
    "t_table": (
        "hand {hand} - you {you}, bot {bot} (to {target}) - {deal} - stock {stock} - knock limit {limit}",
        "ronde {hand} - jij {you}, bot {bot} (tot {target}) - {deal} - trekstapel {stock} - klopgrens {limit}",
        "utdeling {hand} - du {you}, bot {bot} (til {target}) - {deal} - trekkbunken {stock} - bankegrense {limit}",
    ),
    "t_pile": ("discard pile: {cards}", "aflegstapel: {cards}", "kastebunken: {cards}"),
    "t_pile_empty": ("discard pile: empty", "aflegstapel: leeg", "kastebunken: tom"),
    "t_bot_holds": (
        "the bot holds {took} from the pile; threw {threw}",
        "de bot houdt {took} van de aflegstapel; legde af {threw}",
        "boten holder {took} fra kastebunken; kastet {threw}",
    ),
    "t_your_hand": ("your hand: {hand}", "jouw hand: {hand}", "din hånd: {hand}"),
    "t_deadwood": ("(deadwood {n})", "(dood hout {n})", "(restkort {n})"),
    "t_just_took": ("(just took {card})", "(net gepakt: {card})", "(tok nettopp {card})"),
    "t_you_drew": ("(you drew {card})", "(je trok {card})", "(du trakk {card})"),
    "t_hand_over": ("--- hand {n} over: {kind}", "--- ronde {n} voorbij: {kind}", "--- utdeling {n} over: {kind}"),
    "t_you": ("you", "jij", "du"),
    "t_bot": ("bot", "bot", "bot"),
    "t_thinking": ("the bot is thinking...", "de bot denkt na...", "boten tenker..."),
    "t_thought": ("(the bot thought {s} s)", "(de bot dacht {s} s na)", "(boten tenkte {s} s)"),
    "t_knocked": (" (knocked)", " (klopte)", " (banket)"),
    "t_knocked_with": (
        "knocked with {card} face down",
        "klopte met {card} gedekt",
        "banket med {card} med forsiden ned",
    ),
    "t_rearranged": (
        "(the knocker's melds are arranged for its best score against the lay-offs, not for the least deadwood "
        "shown during play: a house rule, docs/rules.md)",
        "(de combinaties van de klopper zijn gelegd voor de beste score tegen het aanleggen, niet voor het minste "
        "dood hout tijdens het spel: een huisregel, docs/rules.md)",
        "(bankerens kombinasjoner er lagt for best poengsum mot avleggingene, ikke for færrest restpoeng under "
        "spillet: en husregel, docs/rules.md)",
    ),
    "t_laid_off": ("laid off {card} onto {meld}", "legde {card} aan bij {meld}", "la av {card} på {meld}"),
    "t_points": ("points: you {you}, bot {bot}", "punten: jij {you}, bot {bot}", "poeng: du {you}, bot {bot}"),
    "t_bd_gin": (
        "({dd} deadwood + {bonus} {kind} bonus)",
        "({dd} dood hout + {bonus} {kind}-bonus)",
        "({dd} restpoeng + {bonus} {kind}-bonus)",
    ),
    "t_bd_undercut": (
        "({kd} - {dd} deadwood + {bonus} undercut bonus)",
        "({kd} - {dd} dood hout + {bonus} undercutbonus)",
        "({kd} - {dd} restpoeng + {bonus} undercutbonus)",
    ),
    "t_bd_knock": ("({dd} - {kd} deadwood)", "({dd} - {kd} dood hout)", "({dd} - {kd} restpoeng)"),
    "t_match": (
        "=== match over: {winner}. Final: you {you}, bot {bot} (bonuses: you {by}, bot {bb})",
        "=== partij voorbij: {winner}. Eindstand: jij {you}, bot {bot} (bonussen: jij {by}, bot {bb})",
        "=== kampen er over: {winner}. Sluttstilling: du {you}, bot {bot} (bonuser: du {by}, bot {bb})",
    ),
    "t_you_win": ("you win", "jij wint", "du vinner"),
    "t_bot_wins": ("the bot wins", "de bot wint", "boten vinner"),
    "t_a_draw": ("a draw", "gelijkspel", "uavgjort"),
    "t_your_move": (
        "your move: {moves}   (help, hint, quit)",
        "jouw zet: {moves}   (hulp, tip, stop)",
        "ditt trekk: {moves}   (hjelp, tips, avslutt)",
    ),
    "t_legal": ("legal moves: ", "toegestane zetten: ", "lovlige trekk: "),
    "t_type": (
        "type: draw, take, pass, a card to discard (7h), knock 7h, big gin, hint, quit",
        "typ: trek, pak, pas, een kaart om af te leggen (7h), klop 7h, big gin, tip, stop",
        "skriv: trekk, ta, pass, et kort å kaste (7h), bank 7h, stor gin, tips, avslutt",
    ),
    "t_hint": ("hint: ", "tip: ", "tips: "),
    "t_match_chance": ("{p}% to win the match", "{p}% kans op de partij", "{p}% sjanse til å vinne kampen"),
    "t_no_hints": (
        "no trained policy at hand for hints",
        "geen getraind beleid voor tips",
        "ingen trent policy for tips",
    ),
    "t_bye": ("bye", "tot ziens", "ha det"),
    "t_intro": (
        "gin rummy against {name}, {rules} rules, {what}",
        "gin rummy tegen {name}, regels {rules}, {what}",
        "gin rummy mot {name}, regler {rules}, {what}",
    ),
    "t_one_hand": ("one hand", "één ronde", "én utdeling"),
    "t_a_match": ("a match", "een partij", "en kamp"),
    # the words a move is typed with (the first is what the terminal shows)
    "c_draw": ("draw", "trek", "trekk"),
    "c_take": ("take", "pak", "ta"),
    "c_pass": ("pass", "pas", "pass"),
    "c_discard": ("discard", "leg af", "kast"),
    "c_knock": ("knock", "klop", "bank"),
    "c_big_gin": ("big gin", "big gin", "stor gin"),
    "c_help": ("help", "hulp", "hjelp"),
    "c_hint": ("hint", "tip", "tips"),
    "c_quit": ("quit", "stop", "avslutt"),
    # a typed move that cannot be played (the terminal says why, in its language)
    "e_empty": ("type a move (help lists them)", "typ een zet (hulp toont ze)", "skriv et trekk (hjelp viser dem)"),
    "e_needs_card": (
        "{word} needs the card to lay face down, e.g. '{word} 7h'",
        "{word} heeft de kaart nodig die je gedekt neerlegt, bv. '{word} 7h'",
        "{word} trenger kortet du legger med billedsiden ned, f.eks. '{word} 7h'",
    ),
    "e_unknown": (
        "unknown command {word!r}; {commands}",
        "onbekend commando {word!r}; {commands}",
        "ukjent kommando {word!r}; {commands}",
    ),
    "e_unreadable": (
        "cannot read {text!r} as a move; {commands}",
        "kan {text!r} niet als zet lezen; {commands}",
        "kan ikke lese {text!r} som et trekk; {commands}",
    ),
    "e_one_card": (
        "expected one card, got {token!r}",
        "verwachtte één kaart, kreeg {token!r}",
        "ventet ett kort, fikk {token!r}",
    ),
    "e_illegal": ("{why}; legal: {legal}", "{why}; toegestaan: {legal}", "{why}; lovlig: {legal}"),
    "e_draw_first": (
        "{move} is not legal now: draw first (from the stock or the pile)",
        "{move} mag nu niet: trek eerst (van de trekstapel of de aflegstapel)",
        "{move} er ikke lov nå: trekk først (fra trekkbunken eller kastebunken)",
    ),
    "e_just_taken": (
        "you cannot discard {card}: it is the card you just took from the pile",
        "je mag {card} niet afleggen: je pakte die kaart net van de aflegstapel",
        "du kan ikke kaste {card}: det er kortet du nettopp tok fra kastebunken",
    ),
    "e_over_limit": (
        "you cannot knock with {card}: the deadwood left would be over the knock limit",
        "je kunt niet kloppen met {card}: het dode hout dat overblijft zou boven de klopgrens liggen",
        "du kan ikke banke med {card}: restkortene ville bli over bankegrensen",
    ),
    "e_not_held": ("you do not hold {card}", "je hebt {card} niet", "du har ikke {card}"),
    "e_not_now": ("{move} is not legal now", "{move} mag nu niet", "{move} er ikke lov nå"),
    # moves
    "mv_draw": ("draw from the stock", "trek van de trekstapel", "trekk fra trekkbunken"),
    "mv_take": ("take the discard", "pak de afgelegde kaart", "ta kortet fra kastebunken"),
    "mv_pass": ("pass", "pas", "pass"),
    "mv_discard": ("discard {card}", "leg {card} af", "kast {card}"),
    "mv_knock_with": ("knock with {card}", "klop met {card}", "bank med {card}"),
    "mv_knock": ("knock", "klop", "bank"),
    "mv_big_gin": ("declare big gin", "meld big gin", "meld stor gin"),
}


def check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    return lang


def phrase(lang: str, key: str, **fields) -> str:
    """One phrase in ``lang`` with its ``{fields}`` filled."""
    return TEXT[key][LANGUAGES.index(check_lang(lang))].format(**fields)


def table(lang: str) -> dict:
    """Every phrase of ``lang`` by key, fields unfilled (what the page reads)."""
    k = LANGUAGES.index(check_lang(lang))
    return {key: texts[k] for key, texts in TEXT.items()}


def to_english(lang: str, line: str) -> str:
    """A typed line with ``lang``'s command words (``klop 7h``, ``trekk``) in English (the
    words ``parse_move`` and the terminal read); English and unknown words pass through."""
    words = line.strip().lower()
    if check_lang(lang) == "en":
        return words
    k = LANGUAGES.index(lang)
    for key in ("c_big_gin", "c_draw", "c_take", "c_pass", "c_knock", "c_help", "c_hint", "c_quit"):
        local, english = TEXT[key][k], TEXT[key][0]
        if words == local or words.startswith(local + " "):
            return english + words[len(local) :]
    return words


def move_label(lang: str, action: int) -> str:
    """A move's name in ``lang`` (``-1``: a knock whose card is not shown)."""
    if action == -1:
        return phrase(lang, "mv_knock")
    if action < A.KNOCK:
        return phrase(lang, "mv_discard", card=format_card(action))
    if action < A.DRAW_STOCK:
        return phrase(lang, "mv_knock_with", card=format_card(action - A.KNOCK))
    key = {A.DRAW_STOCK: "mv_draw", A.TAKE_DISCARD: "mv_take", A.PASS: "mv_pass", A.BIG_GIN: "mv_big_gin"}[action]
    return phrase(lang, key)
