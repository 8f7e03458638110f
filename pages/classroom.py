"""Class mode: students join with a code or QR and answer the quiz; the teacher (password) sees the class live.
Widgets in mha_core.ui.classroom; codes, storage and figures in mha_core.classroom."""

from mha_core.ui import classroom as view
from mha_core.ui import render

render.page_header("classroom")
if view.role() == "teacher":
    view.teacher()
else:
    view.student()
