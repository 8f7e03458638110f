"""The live lesson through AppTest: the teacher's plan and "Teach live", students' sessions following the teacher's
page and settings (and not while exploring, and at once when back), a class vote with a revote, the histogram and
the reveal, the check step's short quiz, and the votes on the dashboard. Each student is its own AppTest session
against one temporary SQLite database, as several browsers against one server."""

from __future__ import annotations

import sqlite3
import time

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import open_page, shown_text
from mha_core.classroom import Storage, pretty, sqlite_url
from mha_core.i18n import LANGS, translate
from mha_core.lesson import CONCEPTEST, FOLLOW_UP_ROUND, FOLLOW_UPS, default_plan, snapshot, tally
from mha_core.lesson.plan import DEFAULT_CHECK, QUIZ_PAGE
from mha_core.lesson.store import load_plan, publish_live, read_live
from mha_core.quiz import load_questions
from mha_core.settings import H_DIV, SENTENCE
from mha_core.ui import live, teacher
from mha_core.ui import student as student_ui
from mha_core.ui.live import follow
from mha_core.ui.nav import spec

PAGE = spec("classroom").script
PASSWORD = "live 课堂"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    """A fresh SQLite file for this test and a teacher password."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    return url


@pytest.fixture(autouse=True)
def unshared_reads(monkeypatch):
    """Every poll reads the database: these tests publish and read back within one window of the shared read."""
    monkeypatch.setattr(follow, "SHARED_READ_S", 1e-6)
    monkeypatch.setattr(student_ui, "SHARED_S", 1e-6)


@pytest.fixture
def store(db):
    s = Storage.open(db)
    yield s
    s.dispose()


def ok(at: AppTest) -> AppTest:
    """No exception, and the session's next run starts on the page this run ended on (as a browser's address
    does after ``st.switch_page``; AppTest would otherwise rerun the page its own ``switch_page`` last named)."""
    assert not at.exception, at.exception
    at.switch_page(spec(at.session_state[live.PAGE_KEY]).script)
    return at


def teacher_on_class_page(lang: str = "en") -> AppTest:
    """Logged in, one new class open."""
    at = ok(open_page(PAGE, lang))
    ok(at.segmented_control(key="classroom_role").set_value("teacher").run())
    at.text_input(key="classroom_pw_in").input(PASSWORD)
    ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run())
    ok(at.button(key="classroom_new").click().run())
    return ok(at)


def teach_live(lang: str = "en") -> AppTest:
    at = teacher_on_class_page(lang)
    ok(at.button(key=live.START_KEY).click().run())
    return ok(at)


def student(code: str, name: str, lang: str = "en") -> AppTest:
    """A student who joined by the class link."""
    at = ok(open_page(PAGE, lang, query={"class": code}))
    at.text_input(key="classroom_name_in").input(name)
    ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run())
    return ok(at)


def page_of(at: AppTest) -> str:
    return at.session_state[live.PAGE_KEY]


def the_class(store: Storage):
    (info,) = store.list_classes()
    return info


def markdowns(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


@pytest.mark.parametrize("lang", LANGS)
def test_teach_live_stores_step_0_and_presents_it_with_the_join_code(store, lang):
    at = teach_live(lang)
    info = the_class(store)
    version, state = read_live(store, info.id)
    plan = default_plan()
    assert version == 1 and state.step == 0 and state.page == plan.steps[0].page
    assert dict(state.settings)[H_DIV.key] == at.session_state[H_DIV.key]
    assert load_plan(store, info.id) == plan                       # the plan taught is saved with the class
    assert page_of(at) == plan.steps[0].page and at.session_state[live.PRESENTER_KEY].class_id == info.id
    bar = translate(lang, "live.step_of", i=1, n=len(plan.steps), page=translate(lang, f"nav.{plan.steps[0].page}"))
    assert bar in markdowns(at)
    assert pretty(info.code) in [h.value for h in at.header]     # step 0: the join code while students arrive
    assert at.sidebar.select_slider(key=H_DIV.key)               # the presenter keeps the sidebar's settings


def test_students_follow_the_teachers_page_and_settings_in_any_language(store):
    at = teach_live("en")
    info = the_class(store)
    ann, bo = student(info.code, "Ann", "en"), student(info.code, "薄", "zh")
    for s in (ann, bo):  # joining on the class page, they are brought to the teacher's page
        assert page_of(s) == "overview"
        assert translate(s.session_state["lang"], "live.following_teacher", where=translate(
            s.session_state["lang"], "live.step_n_of", i=1, n=len(default_plan().steps),
            page=translate(s.session_state["lang"], "nav.overview"))) \
            in " ".join(markdowns(s))
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(2).run())
    ok(at.text_area(key=SENTENCE.key).input("Ich sehe den Hund .").run())
    version, state = read_live(store, info.id)
    assert version == 3 and dict(state.settings)[H_DIV.key] == 2
    for s in (ann, bo):
        ok(s.run())
        assert s.session_state[H_DIV.key] == 2 and s.session_state[SENTENCE.key] == "Ich sehe den Hund ."
        assert snapshot(s.session_state) == state.settings
        assert s.query_params[live.LIVE_QUERY] == str(version)  # written last: the browser's proof it drew it
    ok(at.button(key=live.NEXT_KEY).click().run())
    assert page_of(at) == "prereq" and read_live(store, info.id)[1].step == 1
    ok(at.switch_page(spec("attend").script).run())                  # the teacher navigates by the sidebar
    assert read_live(store, info.id)[1].page == "attend" and read_live(store, info.id)[1].step == 3
    for s in (ann, bo):
        ok(s.run())
        assert page_of(s) == "attend" and s.session_state["lang"] in LANGS
    assert bo.session_state["lang"] == "zh"                      # each keeps their own language


def test_an_exploring_student_is_not_followed_and_one_tap_brings_them_back(store):
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann")
    ok(ann.button(key=live.EXPLORE_KEY).click().run())
    ok(ann.switch_page(spec("glossary").script).run())
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(8).run())
    ok(at.button(key=live.NEXT_KEY).click().run())
    ok(ann.run())
    assert page_of(ann) == "glossary" and ann.session_state[H_DIV.key] != 8
    assert translate("en", "live.back") in [b.label for b in ann.button]
    assert store.presence(info.id) == (0, 1)                     # here, not following
    ok(ann.button(key=live.BACK_KEY).click().run())                  # one tap: at once, no waiting for a poll
    ok(ann)
    assert page_of(ann) == "prereq" and ann.session_state[H_DIV.key] == 8
    ok(ann.switch_page(spec("glossary").script).run())               # following: strict, brought back
    assert page_of(ann) == "prereq"


def answers_of(store: Storage, class_id: int, key: str) -> list[tuple[str, int, int, bool]]:
    return sorted((r.name, r.round, r.choice, r.correct) for r in store.votes(class_id, key))


def vote(s: AppTest, choice: int) -> None:
    radio = next(r for r in s.radio if r.key and r.key.startswith("live_choice_") and not r.disabled)
    ok(radio.set_value(choice).run())
    ok(s.button(key=live.SEND_KEY).click().run())
    ok(s)


def test_send_is_never_disabled_and_an_empty_send_says_pick_an_option_first(store):
    """A browser once kept the send button disabled for 30 s after the server had redrawn it enabled (bench_live):
    the button is enabled before a choice, and a send without one stores nothing and says why, in each language."""
    at = teacher_on_class_page()
    ok(at.button(key=live.START_KEY).click().run())
    info = the_class(store)
    ann, bo = student(info.code, "Ann"), student(info.code, "Bo", "zh")
    ok(at.button(key=live.OPEN_KEY).click().run())
    vk = read_live(store, info.id)[1].vote.key
    for s, lang in ((ann, "en"), (bo, "zh")):
        ok(s.run())
        assert not s.button(key=live.SEND_KEY).disabled
        ok(s.button(key=live.SEND_KEY).click().run())
        assert translate(lang, "errors.vote_pick_first") in [e.value for e in s.error]
    assert answers_of(store, info.id, vk) == []
    vote(ann, 0)
    assert [(name, choice) for name, _, choice, _ in answers_of(store, info.id, vk)] == [("Ann", 0)]
    assert translate("en", "errors.vote_pick_first") not in [e.value for e in ann.error]


@pytest.mark.usefixtures("short_busy_timeout")
def test_a_full_peer_instruction_cycle_closes_round_one_unseen_then_revote_both_rounds_and_a_follow_up(store, tmp_path):
    at = teacher_on_class_page()
    ok(at.selectbox(key=live.kind_key(0)).set_value(CONCEPTEST).run())   # overview: a ConcepTest, not a prediction
    ok(at.button(key=live.START_KEY).click().run())
    info = the_class(store)
    ann, bo = student(info.code, "Ann"), student(info.code, "Bo", "zh")
    waiting = translate("en", "live.vote_wait_open")
    assert waiting in [i.value for i in ann.info]                # not open yet: the ballot is disabled
    ok(at.segmented_control(key=live.COUNTDOWN_KEY).set_value(60).run())
    ok(at.button(key=live.OPEN_KEY).click().run())
    state = read_live(store, info.id)[1]
    vk, answer, n = state.vote.key, state.vote.answer, state.vote.n_options
    assert (state.vote.phase, state.vote.round, state.vote.kind) == ("open", 1, CONCEPTEST)
    assert vk.startswith("overview.")
    assert state.vote.deadline is not None and 0 < state.vote.deadline - time.time() <= 60
    wrong = (answer + 1) % n
    for s in (ann, bo):
        ok(s.run())
    assert f"**{translate('en', 'pi.alone')}**" in [i.value for i in ann.info]   # round 1: alone, in each language
    assert f"**{translate('zh', 'pi.alone')}**" in [i.value for i in bo.info]
    vote(ann, answer)
    holder = sqlite3.connect(tmp_path / "data" / "class.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")                            # the database busy: nothing lost
    try:
        vote(bo, wrong)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert translate("zh", "errors.class_db_busy") in [e.value for e in bo.error]
    assert bo.button(key=live.SEND_KEY).label == translate("zh", "live.vote_send_again")
    ok(bo.button(key=live.SEND_KEY).click().run())                   # the choice was kept: send again
    assert answers_of(store, info.id, vk) == [("Ann", 1, answer, True), ("Bo", 1, wrong, False)]
    assert translate("zh", "live.vote_in") in [s.value for s in bo.success]
    ok(at.run())
    assert translate("en", "live.voted", x=2, y=2) in [m.value for m in at.metric]
    ok(at.button(key=live.CLOSE_KEY).click().run())                  # closed, and nothing shown
    assert read_live(store, info.id)[1].vote.phase == "closed"
    assert not (at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart"))
    assert f"**{translate('en', 'pi.discuss')}**" in [i.value for i in at.info]
    coach_text = translate("en", "pi.coach_discuss", share="50%")     # 1 of 2 right: discuss, then vote again
    assert coach_text in markdowns(at)                               # in the presenter's popover only
    for s in (ann, bo):
        ok(s.run())
        assert not any(translate(s.session_state["lang"], "pi.coach_title") in x for x in shown_text(s).split("\n"))
    assert f"**{translate('zh', 'pi.discuss')}**" in [i.value for i in bo.info]
    assert coach_text not in shown_text(ann)
    ok(at.button(key=live.AGAIN_KEY).click().run())
    assert read_live(store, info.id)[1].vote.round == 2
    for s in (ann, bo):
        ok(s.run())
    vote(bo, answer)                                             # after discussing, Bo changes their mind
    vote(ann, answer)
    ok(at.button(key=live.CLOSE_KEY).click().run())
    assert read_live(store, info.id)[1].vote.phase == "histogram"  # both rounds, side by side
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    ok(at.button(key=live.REVEAL_KEY).click().run())
    ok(at)
    rows = store.votes(info.id, vk)
    assert tally(rows, vk, 1, n)[answer] == 1 and tally(rows, vk, 2, n)[answer] == 2
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate("en", "live.right_share")] == "50% → 100%"
    assert (metrics[translate("en", "pi.wrong_to_right")], metrics[translate("en", "pi.right_to_wrong")]) == ("1", "0")
    for s in (ann, bo):
        ok(s.run())
        lang = s.session_state["lang"]
        assert any(x.value.startswith(translate(lang, "common.predict_right", answer="")[:5]) for x in s.success)
    late = student(info.code, "Cy")                              # never voted: the answer, not a grade
    assert any(i.value.startswith(translate("en", "live.vote_none", answer="")[:10]) for i in late.info)
    ok(at.button(key=live.FOLLOW_UP_KEY).click().run())              # the follow-up: another surface, same idea
    follow_up = read_live(store, info.id)[1].vote
    assert (follow_up.round, follow_up.phase, follow_up.follow_up) == (FOLLOW_UP_ROUND, "open", FOLLOW_UPS["overview"])
    for s in (ann, bo):
        ok(s.run())
    question = {q.id: q for q in load_questions("zh")}[follow_up.follow_up]
    assert any(question.prompt in m for m in markdowns(bo))          # in the student's own language
    # answered alone, as Smith et al. 2009's isomorphic question was: on every phone and the projector
    assert f"**{translate('zh', 'pi.alone')}**" in [i.value for i in bo.info]
    assert f"**{translate('en', 'pi.alone')}**" in [i.value for i in ann.info]
    assert translate("en", "pi.alone") in [i.value for i in at.info]
    vote(ann, follow_up.answer)
    vote(bo, (follow_up.answer + 1) % follow_up.n_options)
    ok(at.button(key=live.CLOSE_KEY).click().run())
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics[translate("en", "live.round_1")], metrics[translate("en", "live.round_2")],
            metrics[translate("en", "pi.follow_up_label")]) == ("50%", "100%", "50%")
    ok(at.switch_page(PAGE).run())                                   # the dashboard counts the votes
    ok(at)
    table = at.dataframe[-1].value
    assert list(table[translate("en", "live.col_round")])[:2] == [1, 2]
    assert list(table[translate("en", "live.col_share")])[:2] == ["50%", "100%"]


def test_the_check_step_shows_only_its_questions_to_following_students(store):
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann")
    solo = ok(open_page(spec("quiz").script, "en"))               # not in the class: the whole bank
    ok(at.switch_page(spec(QUIZ_PAGE).script).run())
    state = read_live(store, info.id)[1]
    assert state.page == QUIZ_PAGE and state.questions == DEFAULT_CHECK
    ok(ann.run())
    n = len(DEFAULT_CHECK)
    assert page_of(ann) == QUIZ_PAGE
    assert translate("en", "live.check_caption", n=n) in [c.value for c in ann.caption]
    progress = [p.proto.text for p in ann.get("progress")]
    assert translate("en", "quiz.progress", answered=0, total=n) in progress
    assert translate("en", "live.check_caption", n=n) not in shown_text(solo)
    assert translate("en", "quiz.progress", answered=0, total=n) not in [p.proto.text for p in solo.get("progress")]


def test_the_plan_editor_reorders_drops_retimes_adds_and_saves(store):
    at = teacher_on_class_page()
    info = the_class(store)
    plan = default_plan()
    ok(at.button(key=live.step_button_key("down", 0)).click().run())
    ok(at.button(key=live.step_button_key("drop", 7)).click().run())
    ok(at.number_input(key=live.minutes_key(0)).set_value(9.5).run())
    ok(at.selectbox(key=live.ADD_PAGE_KEY).set_value("cost").run())
    ok(at.button(key=live.ADD_KEY).click().run())
    ok(at)
    assert load_plan(store, info.id) is None                      # not saved yet
    ok(at.button(key=live.SAVE_KEY).click().run())
    saved = load_plan(store, info.id)
    pages = [s.page for s in saved.steps]
    expected = [plan.steps[1].page, plan.steps[0].page, *(s.page for s in plan.steps[2:7]), "cost"]
    assert pages == expected and saved.steps[0].minutes == 9.5
    total = 9.5 + plan.steps[0].minutes + sum(s.minutes for s in plan.steps[2:7]) + live.NEW_STEP_MINUTES
    assert saved.total_minutes() == total
    assert translate("en", "live.plan_total", n=8, minutes=f"{total:g}") in markdowns(at)
    ok(at.button(key=live.RESET_KEY).click().run())
    ok(at.button(key=live.SAVE_KEY).click().run())
    assert load_plan(store, info.id) == plan
    assert teacher.TEACH_CODE_KEY in at.session_state


def test_ending_the_lesson_frees_the_students(store):
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann")
    ok(at.button(key=live.END_KEY).click().run())
    ok(at)
    assert read_live(store, info.id)[1] is None and live.PRESENTER_KEY not in at.session_state
    assert not at.session_state["present"]
    ok(ann.run())
    assert translate("en", "live.explore") not in [b.label for b in ann.button]
    assert live.LIVE_QUERY not in ann.query_params
    ok(ann.switch_page(spec("glossary").script).run())
    assert page_of(ann) == "glossary"


def test_the_vote_charts_are_valid_and_the_histogram_hides_the_answer_until_revealed():
    """The vote charts are plain Vega-Lite specs (no Altair on a first page): valid against the schema Altair
    ships, and drawn the way render.chart draws a finished spec (one inline data set, exported as CSV)."""
    import altair as alt

    from mha_core.charts import votes as vote_charts
    from mha_core.charts.spec import spec_and_data

    labels = ("a × b", "same", "less")
    hidden = vote_charts.histogram((3, 5, 0), labels, count_title="Votes")
    shown = vote_charts.histogram((3, 5, 0), labels, answer=1)
    moved = vote_charts.shift_bars((3, 5, 0), (1, 7, 0), labels, round_titles=("R1", "R2"))
    for made in (hidden, shown, moved):
        alt.Chart.from_dict(made, validate=True)  # raises on a spec Vega-Lite would refuse
        assert spec_and_data(made)[1] is None and len(made["datasets"]) == 1
    assert set(hidden["encoding"]["color"]["scale"]["range"]) == {vote_charts.OTHER}
    assert shown["encoding"]["color"]["scale"]["range"] == [vote_charts.OTHER, vote_charts.RIGHT, vote_charts.OTHER]
    data = next(iter(moved["datasets"].values()))
    assert [row["count"] for row in data] == [3, 5, 0, 1, 7, 0]
    assert [row["round"] for row in data] == ["R1"] * 3 + ["R2"] * 3


def test_a_process_reads_a_classs_live_state_once_per_window_for_all_its_students(store, monkeypatch):
    """60 polling students cost one read per SHARED_READ_S, not 60 a second; a new window reads the new version."""
    from mha_core.lesson import LiveState

    info = store.create_class()
    publish_live(store, info.id, LiveState(step=0, page="overview", settings=()))
    monkeypatch.setattr(follow, "SHARED_READ_S", 3600.0)
    first = follow.shared_read(info.id, None)
    publish_live(store, info.id, LiveState(step=1, page="prereq", settings=()))
    assert follow.shared_read(info.id, None) == first  # the same window: the shared read
    monkeypatch.setattr(follow, "SHARED_READ_S", 1e-6)
    version, state = follow.shared_read(info.id, None)
    assert version == first[0] + 1 and state.page == "prereq"


def test_followers_share_one_read_of_who_was_removed_and_a_removed_one_is_told_at_the_next_redraw(store, monkeypatch):
    """A following student's redraw checked its own removal with a read of its own, 60 per move with the class's
    turn held; now the process's followers share one read per SHARED_S (issue 26)."""
    at = teach_live()
    info = the_class(store)
    ann, bo = student(info.code, "Ann"), student(info.code, "Bo")
    reads: list[int] = []
    real = Storage.removed_keys
    monkeypatch.setattr(Storage, "removed_keys", lambda self, class_id: reads.append(class_id) or real(self, class_id))
    monkeypatch.setattr(student_ui, "SHARED_S", 3600.0)
    ok(at.button(key=live.NEXT_KEY).click().run())
    for s in (ann, bo):
        ok(s.run())
    assert reads == [info.id]                                        # one read for both redraws
    store.remove_student(info.id, bo.session_state[student_ui.MEMBER_KEY].student_id)
    monkeypatch.setattr(student_ui, "SHARED_S", 1e-6)                # the next window
    ok(bo.run())
    assert translate("en", "errors.class_removed", code=info.code) in [e.value for e in bo.error]
    assert student_ui.MEMBER_KEY not in bo.session_state


def test_every_full_run_of_a_follower_draws_the_teachers_values(store):
    """A browser's rerun queued before the follow rerun carries its old widget values, which Streamlit applies at the
    start of the run (bench_live found students stuck on the old h for a whole move): every full run of a following
    student copies the teacher's values again before any widget is drawn."""
    at = teach_live("en")
    info = the_class(store)
    ann = student(info.code, "Ann")
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(2).run())
    ok(ann.run())
    assert ann.session_state[H_DIV.key] == 2
    for _ in range(3):                                        # the same version: no new publish
        ann.sidebar.select_slider(key=H_DIV.key).set_value(4)  # the browser's old value arrives with the rerun
        ok(ann.run())
        assert ann.session_state[H_DIV.key] == 2
        assert ann.sidebar.select_slider(key=H_DIV.key).value == 2   # and that is what the page draws


def forge(radio, value: str):  # noqa: ANN001, ANN201 - an AppTest Radio
    """The radio sends ``value`` as a tampered browser would over the websocket (any string, not an option)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1.element_tree import Radio

    class Forged(Radio):
        @property
        def _widget_state(self) -> WidgetState:
            return WidgetState(id=self.id, string_value=value)

    radio.__class__ = Forged
    return radio


@pytest.mark.parametrize("forged", ["7", "-1", "abc", "nan", "1e400", "9" * 40, ""])
def test_a_forged_ballot_is_refused_with_a_clear_message_and_nothing_stored(store, forged):
    """A websocket value that is no option (Streamlit's radio hands an unknown value through as it came)."""
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann")
    ok(at.button(key=live.OPEN_KEY).click().run())
    ok(ann.run())
    radio = next(r for r in ann.radio if r.key and r.key.startswith("live_choice_") and not r.disabled)
    ok(radio.set_value(0).run())
    radio = next(r for r in ann.radio if r.key and r.key.startswith("live_choice_") and not r.disabled)
    forge(radio, forged)
    ok(ann.button(key=live.SEND_KEY).click().run())
    assert translate("en", "errors.vote_choice_bad") in [e.value for e in ann.error]
    assert store.votes(info.id) == ()
    assert translate("en", "live.vote_in") not in [s.value for s in ann.success]
    vote(ann, 1)                                                 # a real option is still taken
    assert [v.choice for v in store.votes(info.id)] == [1]


def second_window() -> AppTest:
    """The teacher's second window on the class page: logged in, the running lesson resumed from there."""
    at = ok(open_page(PAGE, "en"))
    ok(at.segmented_control(key="classroom_role").set_value("teacher").run())
    at.text_input(key="classroom_pw_in").input(PASSWORD)
    ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run())
    ok(at.button(key=live.RESUME_KEY).click().run())
    return ok(at)


def test_a_stale_presenter_window_never_moves_the_class_back_and_can_take_over(store):
    first = teach_live()
    info = the_class(store)
    stale = second_window()                                      # on step 0, like the first window now
    ok(first.button(key=live.NEXT_KEY).click().run())
    ok(first.button(key=live.NEXT_KEY).click().run())
    version, state = read_live(store, info.id)
    assert state.step == 2
    ok(stale.button(key=live.NEXT_KEY).click().run())            # from its stale copy: step 1 - refused
    assert read_live(store, info.id) == (version, state)          # the class stays on step 2
    ok(stale)
    plan = default_plan()
    other = translate("en", "live.other_window", i=3, n=len(plan.steps), page=translate("en", f"nav.{state.page}"))
    assert other in [w.value for w in stale.warning]
    assert page_of(stale) == state.page                          # it reloaded: it shows where the class is
    assert stale.button(key=live.NEXT_KEY).disabled and stale.button(key=live.PREV_KEY).disabled
    ok(stale.button(key=live.TAKE_OVER_KEY).click().run())       # explicit: present from here
    ok(stale.button(key=live.NEXT_KEY).click().run())
    assert read_live(store, info.id)[1].step == 3
    assert other not in [w.value for w in stale.warning]
    ok(first.button(key=live.PREV_KEY).click().run())            # now the first window is the stale one
    assert read_live(store, info.id)[1].step == 3
    assert any(w.value.startswith(translate("en", "live.other_window", i=4, n=len(plan.steps), page="")[:40])
               for w in ok(first).warning)


def test_a_presenter_window_after_a_restart_says_the_lesson_runs_and_resumes_it(store):
    at = teach_live()
    info = the_class(store)
    assert at.query_params[live.LESSON_QUERY] == info.code     # the presenter's address names its class
    ok(at.button(key=live.NEXT_KEY).click().run())
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(2).run())
    # a restart: the same address, a new session (not presenting, not logged in)
    query = {"present": "1", live.LESSON_QUERY: info.code}
    projector = ok(open_page(spec("prereq").script, "en", query=query))
    running = translate("en", "live.projector_running", code=pretty(info.code), i=2, page=translate("en", "nav.prereq"))
    assert running in [w.value for w in projector.warning]
    ok(projector.button(key=live.PROJECTOR_LOGIN_KEY).click().run())  # to the class page, as the teacher
    assert page_of(projector) == "classroom"
    projector.text_input(key="classroom_pw_in").input(PASSWORD)
    ok(next(b for b in projector.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run())
    ok(projector.button(key=live.RESUME_KEY).click().run())
    ok(projector)
    assert projector.session_state[live.PRESENTER_KEY].class_id == info.id
    assert dict(read_live(store, info.id)[1].settings)[H_DIV.key] == 2  # resumed where the class is, not reset
    ok(projector.button(key=live.NEXT_KEY).click().run())       # its Next moves the class
    assert read_live(store, info.id)[1].step == 2


def test_the_projector_names_the_class_pages_keys_as_their_owners_do():
    from mha_core.ui import classroom
    assert (live.TEACHER_KEY, live.TEACH_CODE_KEY, live.ROLE_KEY) == (teacher.TEACHER_KEY, teacher.TEACH_CODE_KEY,
                                                                      classroom.ROLE_KEY)


def test_a_logged_in_teachers_projector_offers_resume_in_place(store):
    at = teach_live()
    info = the_class(store)
    ok(at.button(key=live.NEXT_KEY).click().run())
    at.session_state[live.PRESENTER_KEY] = None                  # the session forgot it presents (as a reload)
    at.query_params.pop(live.LESSON_QUERY, None)                 # an older address: the teacher's class is used
    ok(at.switch_page(spec("prereq").script).run())
    running = translate("en", "live.projector_running", code=pretty(info.code), i=2, page=translate("en", "nav.prereq"))
    assert running in [w.value for w in at.warning]
    ok(at.button(key=live.PROJECTOR_RESUME_KEY).click().run())
    ok(at)
    assert at.session_state[live.PRESENTER_KEY].class_id == info.id
    assert running not in [w.value for w in at.warning]
    ok(at.button(key=live.NEXT_KEY).click().run())
    assert read_live(store, info.id)[1].step == 2


def reloaded(s: AppTest) -> AppTest:
    """The same browser after a reload or a server restart: a new session at the same address."""
    query = {k: s.query_params[k] for k in ("class", "student")}
    return ok(open_page(PAGE, s.session_state["lang"], query=query))


@pytest.mark.parametrize("lang", LANGS)
def test_a_student_who_voted_still_sees_their_vote_after_a_reload(store, lang):
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann", lang)
    ok(at.button(key=live.OPEN_KEY).click().run())
    ok(ann.run())
    vk, answer = read_live(store, info.id)[1].vote.key, read_live(store, info.id)[1].vote.answer
    vote(ann, answer)
    ann = reloaded(ann)
    assert ann.radio(key=live.choice_key(vk, 1)).value == answer          # the ballot shows the stored choice
    assert translate(lang, "live.vote_in") in [s.value for s in ann.success]
    ok(at.button(key=live.CLOSE_KEY).click().run())
    ann = reloaded(ann)
    infos = [i.value for i in ann.info]
    assert translate(lang, "live.vote_closed_wait") in infos and translate(lang, "live.vote_missed") not in infos
    ok(at.button(key=live.REVEAL_KEY).click().run())
    ann = reloaded(ann)
    assert not any(i.value.startswith(translate(lang, "live.vote_none", answer="")[:6]) for i in ann.info)
    opt = next(r for r in ann.radio if r.key == live.choice_key(vk, 1)).options[answer]
    assert translate(lang, "common.predict_right", answer=opt) in [s.value for s in ann.success]



def test_a_vote_the_database_did_not_take_survives_a_reload_and_is_sent_again(store, tmp_path, short_busy_timeout):
    at = teach_live()
    info = the_class(store)
    ann = student(info.code, "Ann")
    ok(at.button(key=live.OPEN_KEY).click().run())
    ok(ann.run())
    vk, answer = read_live(store, info.id)[1].vote.key, read_live(store, info.id)[1].vote.answer
    holder = sqlite3.connect(tmp_path / "data" / "class.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")                            # the database busy: the vote is not stored
    try:
        vote(ann, answer)
        assert translate("en", "errors.class_db_busy") in [e.value for e in ann.error]
        again = reloaded(ann)                                    # a reload while still busy: the choice is kept
        assert again.radio(key=live.choice_key(vk, 1)).value == answer
        assert again.button(key=live.SEND_KEY).label == translate("en", "live.vote_send_again")
        assert translate("en", "live.vote_unsent") in [w.value for w in again.warning]
        assert translate("en", "live.vote_in") not in [s.value for s in again.success]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.votes(info.id) == ()
    back = reloaded(again)                                       # the next reload sends it: counted, and said
    assert [(v.choice, v.round) for v in store.votes(info.id)] == [(answer, 1)]
    assert translate("en", "live.vote_in") in [s.value for s in back.success]
    assert live.UNSENT.of(back.session_state["classroom_member"].key) == {}


def test_a_presenter_run_stopped_right_after_its_publish_keeps_presenting(store, monkeypatch):
    """A full rerun request (the teacher's next click, a slider being dragged) stops the running script at its next
    session-state access: Streamlit checks for one before every st.session_state read or write. Stopped right
    after its publish committed, the presenter's run never records the version it wrote; the window must not then
    take its own publish for another window's ("another window presents", publishing nothing more: the class
    stuck on the old settings, as the live e2e test once saw after an h move)."""
    import contextlib

    from streamlit.runtime.scriptrunner_utils.exceptions import StopException
    from streamlit.runtime.state.safe_session_state import SafeSessionState

    at = teach_live()
    info = the_class(store)
    armed = {"write": False, "stop": False}
    real_writing, real_set = Storage.writing, SafeSessionState.__setitem__

    @contextlib.contextmanager
    def writing(self):  # noqa: ANN001, ANN202 - Storage.writing, then the stop armed for the next state write
        with real_writing(self) as conn:
            yield conn
        if armed["write"]:
            armed["write"], armed["stop"] = False, True

    def setitem(self, key, value) -> None:  # noqa: ANN001 - SafeSessionState.__setitem__
        if armed["stop"]:
            armed["stop"] = False
            raise StopException  # as a rerun request arriving right after the commit
        real_set(self, key, value)

    monkeypatch.setattr(Storage, "writing", writing)
    monkeypatch.setattr(SafeSessionState, "__setitem__", setitem)
    armed["write"] = True
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(2).run())  # published, then the run stopped
    assert not armed["stop"] and dict(read_live(store, info.id)[1].settings)[H_DIV.key] == 2
    ok(at.run())                                                     # the next run (or the clock's tick)
    ok(at.sidebar.select_slider(key=H_DIV.key).set_value(8).run())
    assert not any(translate("en", "live.take_over") == b.label for b in at.button)
    assert dict(read_live(store, info.id)[1].settings)[H_DIV.key] == 8  # the class follows the next move


def test_followers_under_apptest_run_every_part_themselves(store):
    """AppTest keeps each widget's format function in its session as the widget is drawn: a part replayed from a
    classmate's recording (ui.shared_body) would leave the language radio without one, and the next run failed."""
    teach_live("en")
    info = the_class(store)
    ann, bo = student(info.code, "Ann"), student(info.code, "Bo")
    for s in (ann, bo, reloaded(ann), reloaded(bo)):  # a reload: a new session, opened on the teacher's page
        ok(s.run())
        assert s.sidebar.radio(key="lang").format_func("zh") == translate("zh", "common.lang_name")
