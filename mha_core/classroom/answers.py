"""The class store's answers and every student's quiz progress: a graded answer stored once per (class, student,
question), and progress saved by compare-and-set together with the class answer it adds (both or neither)."""

from __future__ import annotations

from sqlalchemy import Boolean, Connection, DateTime, Integer, String, exc, literal, select

from mha_core.classroom.db import Database, dialect_insert, gone, utc_now
from mha_core.classroom.rows import AnswerRow, ClassAnswer, Member, SaveOutcome
from mha_core.classroom.schema import answers, classes, progress, students
from mha_core.errors import LabError


class AnswerTables(Database):
    """Class answers and quiz progress."""

    def _answer_stmt(self, member: Member, question_id: str, canonical: str, correct: bool, replace: bool):  # noqa: ANN202
        ins = dialect_insert(self.engine, answers)
        src = select(
            literal(member.class_id, Integer), literal(member.student_id, Integer), literal(question_id, String),
            literal(canonical, String), literal(bool(correct), Boolean), literal(1, Integer),
            literal(utc_now(), DateTime(timezone=True)),
        ).where(select(classes.c.id).where(classes.c.id == member.class_id, classes.c.closed.is_(False)).exists())
        # a student row that is gone fails the foreign key (IntegrityError): see gone
        stmt = ins.from_select(
            ["class_id", "student_id", "question_id", "canonical", "correct", "attempts", "answered_at"], src)
        if replace:
            stmt = stmt.on_conflict_do_update(
                index_elements=["class_id", "student_id", "question_id"],
                set_={"canonical": ins.excluded.canonical, "correct": ins.excluded.correct,
                      "attempts": answers.c.attempts + 1, "answered_at": ins.excluded.answered_at})
        else:  # keep what is stored (re-uploading earlier answers must never change one)
            stmt = stmt.on_conflict_do_update(index_elements=["class_id", "student_id", "question_id"],
                                              set_={"attempts": answers.c.attempts})
        return stmt.returning(answers.c.id)

    def _refused(self, conn: Connection, member: Member) -> LabError:
        """Why the class took no answer: closed, or no longer in the database."""
        row = conn.execute(select(classes.c.closed).where(classes.c.id == member.class_id,
                                                          classes.c.code == member.code)).first()
        alive = row is not None and conn.execute(
            select(students.c.id).where(students.c.id == member.student_id)).first() is not None
        if alive:
            return LabError("class_closed", code=member.code)
        return gone(member)

    def record(self, member: Member, question_id: str, canonical: str, correct: bool, replace: bool = True) -> None:
        """Store a graded answer; a resubmission of the same question updates it (attempts + 1), unless
        ``replace`` is False (then a stored answer stays as it is).

        Refused (LabError class_closed / class_gone) when the class is closed or gone; DatabaseError when the
        database fails.
        """
        stmt = self._answer_stmt(member, question_id, canonical, correct, replace)
        try:
            with self.writing() as conn:
                stored = conn.execute(stmt).first()  # RETURNING (rowcount is unreliable for INSERT … SELECT)
                refused = None if stored is not None else self._refused(conn, member)
        except exc.IntegrityError:  # the student's row is gone (foreign key)
            refused = gone(member)
        if refused is not None:
            raise refused

    def answers(self, class_id: int, student_id: int | None = None) -> tuple[AnswerRow, ...]:
        """The class's stored answers (one student's only, when given), oldest first."""
        query = (select(answers, students.c.name).join(students, students.c.id == answers.c.student_id)
                 .where(answers.c.class_id == class_id).order_by(answers.c.id))
        if student_id is not None:
            query = query.where(answers.c.student_id == student_id)
        with self.reading() as conn:
            rows = conn.execute(query).all()
        return tuple(AnswerRow(r.student_id, r.name, r.question_id, r.canonical, r.correct, r.attempts,
                               r.answered_at) for r in rows)

    # --- quiz progress (every student, in a class or not) ---

    def load_progress(self, key: str) -> tuple[int, str | None]:
        """(version, the stored JSON) of a student's quiz progress; (0, None) when nothing is stored yet."""
        with self.reading() as conn:
            row = conn.execute(select(progress.c.version, progress.c.data).where(progress.c.key == key)).first()
        return (0, None) if row is None else (row.version, row.data)

    def save_progress(self, key: str, version: int, data: str, answer: ClassAnswer | None = None) -> SaveOutcome:
        """Store the progress read at ``version`` (compare-and-set) and, in the same transaction, the class
        answer it adds: both or neither, so the quiz never shows an answer the teacher does not have.

        CONFLICT (nothing stored) when the progress changed since it was read; CLASS_CLOSED / CLASS_GONE when
        the progress was stored but the class refused the answer; DatabaseError when the database fails.
        """
        now = utc_now()
        if version == 0:
            ins = dialect_insert(self.engine, progress)
            cas = ins.values(key=key, data=data, version=1, updated_at=now).on_conflict_do_nothing(
                index_elements=["key"]).returning(progress.c.version)
        else:
            cas = (progress.update().where(progress.c.key == key, progress.c.version == version)
                   .values(data=data, version=version + 1, updated_at=now).returning(progress.c.version))
        try:
            with self.writing() as conn:
                if conn.execute(cas).first() is None:
                    return SaveOutcome.CONFLICT  # nothing written in this transaction
                if answer is None:
                    return SaveOutcome.SAVED
                stmt = self._answer_stmt(answer.member, answer.question_id, answer.canonical, answer.correct,
                                         replace=True)
                if conn.execute(stmt).first() is not None:
                    return SaveOutcome.SAVED
                refused = self._refused(conn, answer.member)
        except exc.IntegrityError:  # the student's row is gone (foreign key): keep the progress, say so
            outcome = self.save_progress(key, version, data)
            return SaveOutcome.CLASS_GONE if outcome is SaveOutcome.SAVED else outcome
        return SaveOutcome.CLASS_CLOSED if refused.key == "class_closed" else SaveOutcome.CLASS_GONE

    def delete_progress(self, key: str) -> None:
        """Forget a student's quiz progress (start over); their class answers stay."""
        with self.writing() as conn:
            conn.execute(progress.delete().where(progress.c.key == key))
