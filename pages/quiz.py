"""Quiz: the class checks what it learned. Widgets and feedback in mha_core.ui.quiz; bank, grading,
scoring and progress in mha_core.quiz."""

from mha_core.ui import quiz as view
from mha_core.ui import render, state

render.page_header("quiz")
state.keep(view.KEPT)
quiz = view.open_quiz()
view.scoreboard(quiz)
view.questions(quiz)
view.summary(quiz)
