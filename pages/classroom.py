"""Class mode: students join with a code or QR and answer the quiz; the teacher (password) sees the class live.
The student's side in mha_core.ui.classroom, the teacher's in mha_core.ui.teacher; codes, storage and figures in
mha_core.classroom."""

from mha_core.ui import classroom, live, render, state, teacher

render.page_header("classroom")
state.keep(classroom.KEPT, teacher.KEPT, live.KEPT)  # live: the plan editor's page for a new step
if classroom.role() == "teacher":
    teacher.view()
else:
    classroom.student_view()
