"""The class store's live lesson: the plan and the presenter's state as JSON text (``mha_core.lesson.store``
encodes them; the store knows no lesson type), the class votes checked against the open vote in the statement that
stores them, and who is here and following."""

from __future__ import annotations

import time

from sqlalchemy import Boolean, Connection, DateTime, Integer, String, case, exc, func, literal, select
from sqlalchemy.dialects import postgresql

from mha_core.classroom.db import Database, dialect_insert, gone, utc_now
from mha_core.classroom.rows import LiveVote, Member, VoteRow
from mha_core.classroom.schema import classes, live, plans, presence, students, votes
from mha_core.errors import LabError

# A student counts as here when seen (a heartbeat) this recently: a following student beats at every poll
# (ui.live.follow.FOLLOW_POLL_S); one whose poll's timer was lost is woken after ui.live.wake.SILENT_S, and beats
# again at the poll that run restarts (tests/test_follow.py checks the three fit).
PRESENT_S = 25.0


class LiveLessonTables(Database):
    """The live lesson's plan, state, votes and presence."""

    def save_plan_json(self, class_id: int, data: str) -> None:
        """Store the class's lesson plan (JSON text, replacing the one before); LabError lesson_class_gone if the
        class is no longer in the database."""
        ins = dialect_insert(self.engine, plans)
        stmt = ins.values(class_id=class_id, data=data, updated_at=utc_now()).on_conflict_do_update(
            index_elements=["class_id"], set_={"data": ins.excluded.data, "updated_at": ins.excluded.updated_at})
        try:
            with self.writing() as conn:
                conn.execute(stmt)
        except exc.IntegrityError:  # the class is gone (foreign key)
            raise LabError("lesson_class_gone") from None

    def load_plan_json(self, class_id: int) -> str | None:
        """The class's saved plan as stored (JSON text); None when it has none."""
        with self.reading() as conn:
            return conn.execute(select(plans.c.data).where(plans.c.class_id == class_id)).scalar()

    def publish_live_json(self, class_id: int, data: str, vote: LiveVote | None, seen: int | None = None) -> int | None:
        """Make ``data`` (a live state's JSON text, whose open ``vote`` is given apart) the class's live state; the
        new version (the one before + 1, 1 for the first), assigned atomically so concurrent publishers never share
        a version. LabError lesson_class_gone without the class.

        With ``seen`` (the version this presenter last read or wrote) it is a compare-and-set in one UPDATE:
        stored only if the version is still ``seen``, else None and nothing stored (another window presented
        since: a stale window must never move the class back)."""
        if seen is not None:
            cas = (live.update().where(live.c.class_id == class_id, live.c.version == seen).values(
                version=live.c.version + 1, data=data, vote_key=vote and vote.key,
                vote_round=vote and vote.round, vote_phase=vote and vote.phase, updated_at=utc_now(),
            ).returning(live.c.version))
            with self.writing() as conn:
                return conn.execute(cas).scalar()
        ins = dialect_insert(self.engine, live)
        stmt = ins.values(
            class_id=class_id, version=1, data=data, vote_key=vote and vote.key,
            vote_round=vote and vote.round, vote_phase=vote and vote.phase, updated_at=utc_now(),
        ).on_conflict_do_update(index_elements=["class_id"], set_={
            "version": live.c.version + 1, "data": ins.excluded.data, "vote_key": ins.excluded.vote_key,
            "vote_round": ins.excluded.vote_round, "vote_phase": ins.excluded.vote_phase,
            "updated_at": ins.excluded.updated_at,
        }).returning(live.c.version)
        try:
            with self.writing() as conn:
                return int(conn.execute(stmt).scalar_one())
        except exc.IntegrityError:  # the class is gone (foreign key)
            raise LabError("lesson_class_gone") from None

    def read_live_json(self, class_id: int) -> tuple[int, str | None]:
        """(version, JSON text) of the class's live lesson: (0, None) when it was never live, (version, None) after
        ``end_live`` (the version keeps growing, so a follower always sees a change)."""
        with self.reading() as conn:
            row = conn.execute(select(live.c.version, live.c.data).where(live.c.class_id == class_id)).first()
        if row is None:
            return 0, None
        return row.version, (row.data or None)

    def end_live(self, class_id: int) -> None:
        """End the live lesson: students stop following, and open votes take no more answers."""
        with self.writing() as conn:
            conn.execute(live.update().where(live.c.class_id == class_id).values(
                version=live.c.version + 1, data="", vote_key=None, vote_round=None, vote_phase=None,
                updated_at=utc_now()))

    def cast_vote(self, member: Member, vote_key: str, round: int, choice: int, correct: bool) -> None:  # noqa: A002
        """Store a student's vote: one row per (class, student, vote key, round), accepted only while the class's
        live vote has this key and round and is open, ``0 <= choice <`` its number of options, and the class is open
        (all checked in the same statement); voting again while open replaces the choice. Refused: LabError
        vote_choice_bad / vote_closed / class_closed / class_gone; DatabaseError when the database fails."""
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < 2**31:
            raise LabError("vote_choice_bad")  # never sent (beyond 32 bits it would overflow PostgreSQL's INTEGER)
        ins = dialect_insert(self.engine, votes)
        vote_open = select(live.c.class_id).where(
            live.c.class_id == member.class_id, live.c.vote_key == vote_key, live.c.vote_round == round,
            live.c.vote_phase == "open", literal(choice, Integer) < self._vote_options()).exists()
        class_open = select(classes.c.id).where(classes.c.id == member.class_id, classes.c.closed.is_(False)).exists()
        in_class = select(students.c.id).where(students.c.id == member.student_id,
                                               students.c.class_id == member.class_id).exists()
        src = select(
            literal(member.class_id, Integer), literal(member.student_id, Integer), literal(vote_key, String),
            literal(round, Integer), literal(choice, Integer), literal(bool(correct), Boolean),
            literal(utc_now(), DateTime(timezone=True)),
        ).where(vote_open, class_open, in_class)
        stmt = ins.from_select(["class_id", "student_id", "vote_key", "round", "choice", "correct", "voted_at"],
                               src).on_conflict_do_update(
            index_elements=["class_id", "student_id", "vote_key", "round"],
            set_={"choice": ins.excluded.choice, "correct": ins.excluded.correct,
                  "voted_at": ins.excluded.voted_at}).returning(votes.c.id)
        try:
            with self.writing() as conn:
                stored = conn.execute(stmt).first()  # RETURNING: no row when the vote or the class refused
                refused = None if stored is not None else self._vote_refused(conn, member, vote_key, round)
        except exc.IntegrityError:  # the student's row is gone (foreign key)
            refused = gone(member)
        if refused is not None:
            raise refused

    def _vote_options(self):  # noqa: ANN202 - a SQL expression
        """The live vote's number of options, read in SQL from the stored LiveState's JSON (NULL when no vote or
        after the lesson ended), so a ballot is checked against it in the statement that stores it."""
        data = func.nullif(live.c.data, "")
        if self.engine.dialect.name == "postgresql":
            return data.cast(postgresql.JSONB)[("vote", "n_options")].astext.cast(Integer)
        return func.json_extract(data, "$.vote.n_options")

    def _vote_refused(self, conn: Connection, member: Member, vote_key: str, round: int) -> LabError:  # noqa: A002
        """Why a vote was not stored: the class is gone or closed, else this vote is not open, else the choice is
        not one of its options."""
        row = conn.execute(select(classes.c.closed).where(classes.c.id == member.class_id,
                                                          classes.c.code == member.code)).first()
        if row is None or conn.execute(select(students.c.id).where(
                students.c.id == member.student_id, students.c.class_id == member.class_id)).first() is None:
            return gone(member)
        if row.closed:
            return LabError("class_closed", code=member.code)
        still_open = conn.execute(select(live.c.class_id).where(
            live.c.class_id == member.class_id, live.c.vote_key == vote_key, live.c.vote_round == round,
            live.c.vote_phase == "open")).first()
        return LabError("vote_closed") if still_open is None else LabError("vote_choice_bad")

    def votes(self, class_id: int, vote_key: str | None = None, student_id: int | None = None) -> tuple[VoteRow, ...]:
        """The class's stored votes (of one vote key, one student only, when given), oldest first."""
        query = (select(votes, students.c.name).join(students, students.c.id == votes.c.student_id)
                 .where(votes.c.class_id == class_id).order_by(votes.c.id))
        if vote_key is not None:
            query = query.where(votes.c.vote_key == vote_key)
        if student_id is not None:
            query = query.where(votes.c.student_id == student_id)
        with self.reading() as conn:
            rows = conn.execute(query).all()
        return tuple(VoteRow(r.student_id, r.name, r.vote_key, r.round, r.choice, r.correct, r.voted_at)
                     for r in rows)

    def heartbeat(self, member: Member, following: bool) -> None:
        """Note that the student is here now, following the teacher or exploring; LabError class_gone when the
        student's row is no longer in the database."""
        ins = dialect_insert(self.engine, presence)
        stmt = ins.values(class_id=member.class_id, student_id=member.student_id, following=bool(following),
                          seen_at=time.time()).on_conflict_do_update(
            index_elements=["class_id", "student_id"],
            set_={"following": ins.excluded.following, "seen_at": ins.excluded.seen_at})
        try:
            with self.writing() as conn:
                conn.execute(stmt)
        except exc.IntegrityError:  # the student's (or the class's) row is gone (foreign key)
            raise gone(member) from None

    def presence(self, class_id: int, within_s: float = PRESENT_S) -> tuple[int, int]:
        """(following, present): students seen in the last ``within_s`` seconds, and those of them following."""
        since = time.time() - within_s
        query = select(func.count(), func.coalesce(func.sum(case((presence.c.following.is_(True), 1), else_=0)), 0)
                       ).where(presence.c.class_id == class_id, presence.c.seen_at >= since)
        with self.reading() as conn:
            present, following = conn.execute(query).one()
        return int(following), int(present)
