"""Deterministic conversations between two speakers, with questions whose evidence turns are known.

``generate(seed)`` returns (turns, questions). Each of :data:`PAIRS` talks over
:data:`SESSIONS` sessions a few days apart; a session mixes small talk with *exchanges* drawn from
:data:`EXCHANGES`, each a fact about one speaker's life told one of three ways:

- **asked** — the other speaker asks ("What did you end up naming the puppy?") and the reply holds
  the answer in words of its own ("We went with Biscuit!"): the question asked later shares its
  topic words with the turn *before* the evidence, not with the evidence;
- **told** — the speaker says it in one turn that carries the topic words too;
- **updated** — a later session changes the fact (the dentist moved to Friday); the question
  asks for the current value and its evidence is the later turn.

Phrasings, values, small talk and the order of everything come from a seeded
:class:`random.Random`, so the same seed gives the same data on every machine. Every question
names its evidence turns by turn id; ``kind`` says how it was told (asked/told/updated).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

START = dt.datetime(2026, 3, 2, 18, 0, tzinfo=dt.UTC)
SESSIONS = 16
"""Sessions per conversation (at least 15)."""

PAIRS = (
    ("Maya", "Tom"),
    ("Priya", "Sam"),
    ("Lena", "Jonas"),
    ("Aiko", "Ben"),
    ("Rosa", "Karim"),
    ("Nina", "Omar"),
)
"""The two speakers of each conversation."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One kind of fact: how it is asked, answered, told, updated, and asked about later.

    ``{v}`` is the value, ``{p}`` the speaker it is about, ``{o}`` the other speaker.
    """

    topic: str
    values: tuple[str, ...]
    asks: tuple[str, ...]
    replies: tuple[str, ...]
    tells: tuple[str, ...]
    questions: tuple[str, ...]
    updates: tuple[str, ...] = ()


EXCHANGES: tuple[Exchange, ...] = (
    Exchange(
        "puppy",
        ("Biscuit", "Pickle", "Moose", "Waffles", "Juniper"),
        (
            "What did you end up naming the new puppy?",
            "So what's the puppy called?",
            "Did you two ever agree on a name for the puppy?",
        ),
        ("We called him {v}!", "{v}. The kids chose it.", "It's {v}, after a long debate."),
        ("Our new puppy is called {v}, he chews everything.",),
        ("what is {p}'s puppy called", "name of the dog {p} got"),
    ),
    Exchange(
        "flight",
        ("Lisbon", "Hanoi", "Reykjavik", "Montreal", "Cape Town"),
        (
            "Where are you flying for the holidays?",
            "Did you book a trip for your time off?",
            "Any travel plans coming up?",
        ),
        ("Yes! {v}, for ten days.", "{v}. Tickets are already paid for.", "Finally going to {v}."),
        ("I booked flights to {v} for my holiday in spring.",),
        ("where is {p} travelling on holiday", "which city did {p} book a trip to"),
        ("Change of plan, the trip is now to {v} instead.",),
    ),
    Exchange(
        "job",
        ("a product designer", "a nurse", "a data engineer", "a teacher", "an architect"),
        ("What does your sister do for work these days?", "Is your sister still in the same job?"),
        ("She's {v} now.", "She retrained, she's {v}.", "{v}, and she loves it."),
        ("My sister started working as {v} last month.",),
        ("what is {p}'s sister's job", "what does {p}'s sister work as"),
    ),
    Exchange(
        "book",
        ("Piranesi", "The Overstory", "Middlemarch", "Klara and the Sun", "Project Hail Mary"),
        ("What are you reading at the moment?", "Any good book on your nightstand?"),
        ("{v}. Can't put it down.", "Just started {v}.", "Rereading {v}, honestly."),
        ("I'm reading {v} for the book club this month.",),
        ("which book is {p} reading", "what novel did {p} pick up"),
    ),
    Exchange(
        "dentist",
        ("Tuesday", "Thursday", "Monday", "Wednesday"),
        ("When is your dentist appointment again?", "Did you sort out the dentist?"),
        ("{v} morning, early.", "It's on {v}.", "{v}, right after lunch."),
        ("My dentist appointment is on {v}, finally.",),
        ("what day is {p}'s dentist appointment", "when does {p} see the dentist"),
        ("They moved my dentist slot to {v}.",),
    ),
    Exchange(
        "allergy",
        ("peanuts", "shellfish", "cats", "pollen", "penicillin"),
        ("Wait, what was it you're allergic to?", "Remind me what your allergy is?"),
        ("{v}. Badly.", "Just {v}, nothing else.", "{v}, since I was a kid."),
        ("I have to be careful, I'm allergic to {v}.",),
        ("what is {p} allergic to", "{p}'s allergy"),
    ),
    Exchange(
        "car",
        ("a green Skoda", "a used Prius", "an old Volvo estate", "an electric Mini"),
        ("Did you buy a car in the end?", "What did you get to replace the old car?"),
        ("We got {v}.", "{v}! Picked it up Saturday.", "Settled on {v}."),
        ("We bought {v} to replace the old car.",),
        ("what car did {p} buy", "which vehicle does {p} drive now"),
    ),
    Exchange(
        "instrument",
        ("the cello", "the ukulele", "drums", "the piano", "the saxophone"),
        ("What instrument is your son learning?", "Which lessons did your son pick?"),
        ("{v}. It's loud.", "He chose {v}.", "{v}, twice a week."),
        ("My son started lessons on {v}.",),
        ("which instrument does {p}'s son play", "what is {p}'s son learning to play"),
    ),
    Exchange(
        "recipe",
        ("shakshuka", "mushroom risotto", "dal with spinach", "pad see ew", "lemon drizzle cake"),
        ("What did you cook for the dinner party?", "What was on the menu on Saturday?"),
        ("{v}, and it worked!", "I made {v}.", "{v}. Everybody had seconds."),
        ("For the dinner party I cooked {v}.",),
        ("what did {p} cook for guests", "which dish did {p} serve at the dinner"),
    ),
    Exchange(
        "marathon",
        ("Berlin", "Valencia", "Chicago", "Rotterdam"),
        ("Which race are you training for?", "What's the big run this year?"),
        ("{v}, in October.", "The {v} one.", "{v}. Wish me luck."),
        ("I signed up for the {v} marathon.",),
        ("which marathon is {p} running", "what race did {p} sign up for"),
    ),
    Exchange(
        "plant",
        ("a fiddle-leaf fig", "a monstera", "basil", "an olive tree", "tomatoes"),
        ("What are you growing on the balcony?", "Did the balcony garden happen?"),
        ("Mostly {v}.", "{v}, it's thriving.", "Just {v} so far."),
        ("The balcony is full of {v} now.",),
        ("what is {p} growing on the balcony", "{p}'s balcony plants"),
    ),
    Exchange(
        "move",
        ("Leeds", "Utrecht", "Porto", "Ghent", "Bristol"),
        ("Where are you moving to?", "Did you decide where to move?"),
        ("{v}. New job there.", "We're going to {v}.", "{v}, in August."),
        ("We're moving to {v} at the end of summer.",),
        ("which city is {p} moving to", "where will {p} live after the move"),
    ),
    Exchange(
        "coffee",
        ("a flat white with oat milk", "a double espresso", "a cortado", "black filter coffee"),
        ("How do you take your coffee?", "What should I order you at the cafe?"),
        ("{v}, please.", "Always {v}.", "{v} if they have it."),
        ("My usual order is {v}.",),
        ("how does {p} take their coffee", "{p}'s usual coffee order"),
    ),
    Exchange(
        "birthday",
        ("the 3rd of May", "June 14", "the 21st of September", "March 8"),
        ("When's your daughter's birthday again?", "What date is the birthday party?"),
        ("{v}.", "It's {v}, she's turning seven.", "{v}, a Saturday this year."),
        ("My daughter's birthday is on {v}.",),
        ("when is {p}'s daughter's birthday", "date of {p}'s daughter's birthday"),
    ),
    Exchange(
        "course",
        ("Spanish", "pottery", "Python programming", "first aid", "watercolour painting"),
        ("What's the evening class you signed up for?", "Which course are you taking?"),
        ("{v}, Wednesdays.", "A {v} class.", "{v}. Finally!"),
        ("I enrolled in an evening course in {v}.",),
        ("what class is {p} taking in the evenings", "which course did {p} enrol in"),
    ),
    Exchange(
        "game",
        ("Wingspan", "Catan", "Pandemic", "Azul", "Terraforming Mars"),
        ("What board game did you play last night?", "Which game won game night?"),
        ("{v}, three rounds.", "{v}. I lost every time.", "We played {v}."),
        ("Game night was {v} again.",),
        ("which board game does {p} play", "what did {p} play at game night"),
    ),
    Exchange(
        "injury",
        ("my left ankle", "my wrist", "my lower back", "my knee"),
        ("How did you get hurt at football?", "What did you injure?"),
        ("Twisted {v}.", "Hurt {v}, nothing broken.", "{v} again, annoyingly."),
        ("I hurt {v} playing football.",),
        ("what did {p} injure", "which body part did {p} hurt"),
    ),
    Exchange(
        "band",
        ("Radiohead", "Khruangbin", "Fleetwood Mac", "Arctic Monkeys", "Bonobo"),
        ("Who are you seeing in concert next month?", "Which gig did you get tickets for?"),
        ("{v}!", "{v}, front row.", "{v}, can you believe it."),
        ("I got tickets to see {v} live.",),
        ("which band is {p} going to see", "who is {p} seeing in concert"),
    ),
    Exchange(
        "neighbour",
        ("Mrs Okafor", "Dieter", "a retired pilot called Frank", "Lucia"),
        ("Who moved in next door?", "Have you met the new neighbour?"),
        ("{v}. Very friendly.", "Yes, {v}.", "{v}, she brought cake."),
        ("Our new neighbour is {v}.",),
        ("who is {p}'s new neighbour", "name of the person next door to {p}"),
    ),
    Exchange(
        "project",
        ("a birdhouse", "a bookshelf", "a garden bench", "a treehouse"),
        ("What are you building in the garage?", "What's the weekend project?"),
        ("{v} for the kids.", "{v}, mostly finished.", "Trying to make {v}."),
        ("I'm building {v} in the garage.",),
        ("what is {p} building", "{p}'s weekend project in the garage"),
    ),
)

ASK_OPENERS = (
    "",
    "",
    "By the way, ",
    "Oh, random question: ",
    "Hey, ",
    "Before I forget, ",
    "Totally unrelated, but ",
    "So, ",
)
REPLY_OPENERS = ("", "", "", "Ha, ", "Oh! ", "Well, ", "Honestly? ", "Ah, ", "Right, so ")
REPLY_CLOSERS = (
    "",
    "",
    "",
    " Long story.",
    " You'd love it.",
    " Don't ask.",
    " Finally.",
    " More on that later.",
    " We'll see how it goes.",
    " I'll send pictures.",
)
SMALL_TALK_TAILS = (
    "",
    "",
    "",
    " Anyway.",
    " Ugh.",
    " How about you?",
    " Such is life.",
    " Can't complain.",
    " Same old.",
    " Talk later?",
)
SMALL_TALK = (
    "The kids have a cold again, so the house is a sick ward.",
    "Just got back from a run.",
    "I finally fixed the leaking tap, very proud.",
    "Our internet was down all morning.",
    "Did you try that new bakery on the corner?",
    "I slept ten hours last night.",
    "My phone screen cracked, of course.",
    "It's been raining all week here.",
    "Mum called, she says hi.",
    "I'm on the train, signal is bad.",
    "We binged that detective show all weekend.",
    "The cat knocked over my coffee.",
    "Payday can't come soon enough.",
    "I started journaling, we'll see if it sticks.",
    "My manager is on holiday so it's quiet.",
    "Finally cleaned out the garage.",
    "Made pancakes this morning.",
    "The neighbours are renovating, drilling since 7.",
    "Is it Friday yet?",
    "I'm trying to drink less coffee. It's going badly.",
    "Hey, how's it going?",
    "Haha, that's great.",
    "Oh no, sorry to hear that.",
    "Long week, honestly.",
    "Same here.",
    "Did you see the weather today?",
    "I'm so tired, the baby kept us up.",
    "Anyway, enough about me.",
    "Talk soon!",
    "That sounds lovely.",
    "Wait, really?",
    "No way!",
    "Good luck with it.",
    "Let me know how it goes.",
    "I'll call you this weekend.",
    "Work is chaos right now.",
    "Did you watch the match?",
    "Ugh, traffic was awful.",
    "Miss you guys.",
    "We should meet up soon.",
    "Ha, classic.",
    "Fingers crossed.",
    "How are the kids?",
    "All good here, busy but good.",
    "I need a holiday.",
    "Totally agree.",
    "Sorry, I was in a meeting.",
    "Congrats!!",
    "That made my day.",
    "Okay, got to run.",
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One line of a conversation: ``id`` "c{n}-s{m}-t{k}"; ``session`` "c{n}-s{m}"."""

    id: str
    conversation: int
    session: str
    speaker: str
    text: str
    time: dt.datetime


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the ids of the turns that answer it; ``kind`` asked/told/updated."""

    query: str
    evidence: tuple[str, ...]
    kind: str
    conversation: int


@dataclass(slots=True)
class _Session:
    turns: list[Turn] = field(default_factory=list)


def _say(turns: list[Turn], n: int, s: int, speaker: str, text: str, time: dt.datetime) -> Turn:
    turn = Turn(f"c{n}-s{s}-t{len(turns)}", n, f"c{n}-s{s}", speaker, text, time)
    turns.append(turn)
    return turn


def _ask(rng: random.Random, ex: Exchange) -> str:
    text = rng.choice(ex.asks)
    opener = rng.choice(ASK_OPENERS)
    return opener + (text[0].lower() + text[1:] if opener else text)


def _reply(rng: random.Random, template: str, value: str) -> str:
    text = template.format(v=value)
    opener = rng.choice(REPLY_OPENERS)
    first = text.split(" ", 1)[0]
    if opener and not text.startswith(value) and first != "I" and not first.startswith("I'"):
        text = text[0].lower() + text[1:]
    return opener + text + rng.choice(REPLY_CLOSERS)


def _small_talk(rng: random.Random) -> str:
    text = rng.choice(SMALL_TALK)
    return text + (rng.choice(SMALL_TALK_TAILS) if text.endswith((".", "!")) else "")


def generate(seed: int = 11) -> tuple[list[Turn], list[Question]]:
    """All turns (in conversation and time order) and the questions about them."""
    rng = random.Random(seed)
    turns: list[Turn] = []
    questions: list[Question] = []
    for n, pair in enumerate(PAIRS):
        # each speaker gets their own facts; every exchange is used by at most one speaker
        kinds = list(EXCHANGES)
        rng.shuffle(kinds)
        plan: list[tuple[Exchange, str]] = [(ex, pair[i % 2]) for i, ex in enumerate(kinds)]
        day = START + dt.timedelta(days=n)
        per_session = -(-len(plan) // SESSIONS) + 1
        pending_updates: list[tuple[Exchange, str, str]] = []
        for s in range(SESSIONS):
            day += dt.timedelta(days=rng.randint(2, 6))
            clock = day.replace(hour=rng.randint(8, 21), minute=rng.randint(0, 59))
            session_turns: list[Turn] = []
            here = plan[:per_session]
            plan = plan[per_session:]
            if not here and not pending_updates:  # late sessions: retell an old fact briefly
                here = [(rng.choice(EXCHANGES), rng.choice(pair))]
            speaker = rng.choice(pair)
            for _ in range(rng.randint(1, 3)):
                clock += dt.timedelta(seconds=rng.randint(20, 240))
                _say(session_turns, n, s, speaker, _small_talk(rng), clock)
                speaker = pair[1] if speaker == pair[0] else pair[0]
            if pending_updates and rng.random() < 0.7:
                ex, person, old = pending_updates.pop(0)
                value = rng.choice([v for v in ex.values if v != old])
                clock += dt.timedelta(seconds=rng.randint(30, 300))
                said = _say(
                    session_turns, n, s, person, _reply(rng, rng.choice(ex.updates), value), clock
                )
                other = pair[1] if person == pair[0] else pair[0]
                questions += [
                    Question(q.format(p=person, o=other), (said.id,), "updated", n)
                    for q in ex.questions
                ]
            for ex, person in here:
                other = pair[1] if person == pair[0] else pair[0]
                value = rng.choice(ex.values)
                clock += dt.timedelta(seconds=rng.randint(30, 400))
                if rng.random() < 0.65:
                    _say(session_turns, n, s, other, _ask(rng, ex), clock)
                    clock += dt.timedelta(seconds=rng.randint(10, 90))
                    said = _say(
                        session_turns,
                        n,
                        s,
                        person,
                        _reply(rng, rng.choice(ex.replies), value),
                        clock,
                    )
                    kind = "asked"
                else:
                    said = _say(
                        session_turns, n, s, person, _reply(rng, rng.choice(ex.tells), value), clock
                    )
                    kind = "told"
                ask = rng.choice(ex.questions).format(p=person, o=other)
                if ex.updates:
                    pending_updates.append((ex, person, value))
                    # asked before the update: both turns answer "what was it"; skip
                    continue
                questions.append(Question(ask, (said.id,), kind, n))
                other_ask = [q for q in ex.questions if q.format(p=person, o=other) != ask]
                if other_ask:
                    questions.append(
                        Question(other_ask[0].format(p=person, o=other), (said.id,), kind, n)
                    )
                for _ in range(rng.randint(0, 2)):
                    clock += dt.timedelta(seconds=rng.randint(20, 200))
                    _say(session_turns, n, s, rng.choice(pair), _small_talk(rng), clock)
            turns += session_turns
    return turns, questions


def jsonl_records(turns: list[Turn]) -> list[dict[str, object]]:
    """Import lines for ``vaultmem import``: "Speaker: text", speaker, session and time."""
    return [
        {
            "content": f"{t.speaker}: {t.text}",
            "speaker": t.speaker,
            "session": t.session,
            "created": t.time.strftime("%Y-%m-%dT%H:%M:%S"),
            "tags": ["conversation"],
        }
        for t in turns
    ]


__all__ = ["EXCHANGES", "PAIRS", "SESSIONS", "Question", "Turn", "generate", "jsonl_records"]
