"""The class store's classes and students: create and find a class, its switches (closed, locked, reveal), join
(the checks and the insert in one statement), restore a member after a reload, remove a student, and the turnout
the presenter shows."""

from __future__ import annotations

from sqlalchemy import Connection, DateTime, String, exc, func, literal, or_, select

from mha_core.classroom.codes import new_code, normalize_code
from mha_core.classroom.db import Database, dialect_insert, utc_now
from mha_core.classroom.names import clean_name, name_key, pseudonym
from mha_core.classroom.rows import ClassInfo, Member, StudentRow, Turnout, class_info
from mha_core.classroom.schema import answers, classes, live, presence, removed, students, votes
from mha_core.errors import LabError


class ClassTables(Database):
    """Classes and their students."""

    # --- classes ---

    def create_class(self, anonymous: bool = False) -> ClassInfo:
        """A new open class with a fresh random join code (``anonymous``: its students join without a name)."""
        for _ in range(5):
            code = new_code()
            try:
                with self.writing() as conn:
                    conn.execute(classes.insert().values(code=code, created_at=utc_now(), closed=False, reveal=False,
                                                         anonymous=bool(anonymous)))
                return self.find_class(code)
            except exc.IntegrityError:  # the same code twice: vanishingly rare, try another
                continue
        raise RuntimeError("could not draw an unused join code")

    def find_class(self, code_text: str) -> ClassInfo:
        """The class with this join code (any case, spaces or dashes); LabError if there is none."""
        code = normalize_code(code_text)
        if code is None:
            raise LabError("class_code_malformed")
        with self.reading() as conn:
            row = conn.execute(select(classes).where(classes.c.code == code)).first()
        if row is None:
            raise LabError("class_code_unknown", code=code)
        return class_info(row)

    def list_classes(self, limit: int = 50) -> tuple[ClassInfo, ...]:
        """The most recent classes first."""
        with self.reading() as conn:
            rows = conn.execute(select(classes).order_by(classes.c.id.desc()).limit(limit)).all()
        return tuple(class_info(r) for r in rows)

    def set_closed(self, class_id: int, closed: bool) -> None:
        """Close a class (no more answers) or open it again."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(closed=closed))

    def set_locked(self, class_id: int, locked: bool) -> None:
        """Lock a class to new students (those who joined before can still come back), or unlock it."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(locked=locked))

    def set_anonymous(self, class_id: int, anonymous: bool) -> None:
        """Make a class anonymous or named, only while nobody has joined it (names given cannot be taken back, and
        a class that promised anonymity cannot start asking for names): LabError class_anonymous_fixed after.

        The class row is updated (locked) first and the students counted after, in a later statement: a join
        running at the same time either waited for this (and sees the new mode) or is counted (and this is
        undone)."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(anonymous=bool(anonymous)))
            joined = conn.execute(select(func.count()).select_from(students)
                                  .where(students.c.class_id == class_id)).scalar_one()
            if joined:
                raise LabError("class_anonymous_fixed", n=int(joined))  # leaving the block rolls the update back

    def set_reveal(self, class_id: int, reveal: bool) -> None:
        """Let the class's students see the explanations (or hide them again)."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(reveal=reveal))

    # --- students ---

    def join(self, code_text: str, key: str, name_text: str, rename: bool = False) -> Member:
        """Join an open class under a display name; joining again with the same key never duplicates, and
        renames only with ``rename`` (the student's own session), else keeps the stored name. In an anonymous
        class no name is asked, checked or stored (whatever ``name_text`` holds, the row's name is empty).

        Refused (LabError): the class is closed (class_closed); locked and the key is new (class_locked); the
        teacher removed this key (class_removed); another student has this name after case folding
        (class_name_taken); the teacher switched anonymous mode since the class was read (class_mode_changed). The
        checks and the insert are one statement, so no race lets a second name in; the class row is read FOR SHARE
        (PostgreSQL), so set_anonymous cannot slip between."""
        info = self.find_class(code_text)
        name = "" if info.anonymous else clean_name(name_text)
        folded = None if info.anonymous else name_key(name)
        if info.closed:
            raise LabError("class_closed", code=info.code)
        ins = dialect_insert(self.engine, students)
        returning = select(students.c.id).where(students.c.class_id == info.id, students.c.key == key).exists()
        src = select(classes.c.id, literal(key, String), literal(name, String), literal(folded, String),
                     literal(utc_now(), DateTime(timezone=True))).where(
            classes.c.id == info.id, classes.c.closed.is_(False), or_(classes.c.locked.is_(False), returning),
            classes.c.anonymous.is_(info.anonymous),
            ~select(removed.c.key).where(removed.c.class_id == info.id, removed.c.key == key).exists(),
        ).with_for_update(read=True)
        kept = {"name": ins.excluded.name, "name_key": ins.excluded.name_key} if rename else \
            {"name": students.c.name, "name_key": students.c.name_key}
        stmt = ins.from_select(["class_id", "key", "name", "name_key", "joined_at"], src).on_conflict_do_update(
            index_elements=["class_id", "key"], set_=kept).returning(students.c.id, students.c.name)
        try:
            with self.writing() as conn:
                row = conn.execute(stmt).first()  # RETURNING: no row when a check refused
                refused = None if row is not None else self._join_refused(conn, info, key)
        except exc.IntegrityError:  # uq_student_name: another key holds this name (or the class just went)
            raise LabError("class_name_taken") from None
        if refused is not None:
            raise refused
        return Member(info.id, info.code, row.id, key, row.name)

    @staticmethod
    def _join_refused(conn: Connection, info: ClassInfo, key: str) -> LabError:
        """Why join stored nothing, as the error to raise (each key a literal, so the catalog check sees it)."""
        class_id, code = info.id, info.code
        if conn.execute(select(removed.c.key).where(removed.c.class_id == class_id, removed.c.key == key)).first():
            return LabError("class_removed", code=code)
        row = conn.execute(select(classes.c.closed, classes.c.locked, classes.c.anonymous)
                           .where(classes.c.id == class_id)).first()
        if row is None:
            return LabError("class_gone", code=code)
        if row.closed:
            return LabError("class_closed", code=code)
        if bool(row.anonymous) != info.anonymous:
            return LabError("class_mode_changed", code=code)
        return LabError("class_locked", code=code)

    def member(self, code_text: str, key: str) -> Member | None:
        """The student with this quiz id in this class, if they joined before (to restore after a reload)."""
        info = self.find_class(code_text)
        with self.reading() as conn:
            row = conn.execute(select(students).where(students.c.class_id == info.id, students.c.key == key)).first()
        return None if row is None else Member(info.id, info.code, row.id, key, row.name)

    def class_of(self, m: Member) -> ClassInfo | None:
        """The member's class as stored now, or None when the class or the student's row is no longer in the
        database (lost, reset or restored from an older copy): the caller says so instead of dropping them."""
        with self.reading() as conn:
            row = conn.execute(select(classes).join(students, students.c.class_id == classes.c.id).where(
                students.c.id == m.student_id, students.c.key == m.key, classes.c.id == m.class_id,
                classes.c.code == m.code)).first()
        return None if row is None else class_info(row)

    def students(self, class_id: int) -> tuple[StudentRow, ...]:
        """Everyone who joined, in joining order."""
        with self.reading() as conn:
            rows = conn.execute(select(students).where(students.c.class_id == class_id)
                                .order_by(students.c.id)).all()
        return tuple(StudentRow(r.id, r.name, r.joined_at) for r in rows)

    def pseudonyms(self, class_id: int) -> dict[int, str]:
        """Student row id -> the opaque id the teacher sees for them in an anonymous class (names.pseudonym)."""
        with self.reading() as conn:
            rows = conn.execute(select(students.c.id, students.c.key, classes.c.code)
                                .join(classes, classes.c.id == students.c.class_id)
                                .where(students.c.class_id == class_id)).all()
        return {r.id: pseudonym(r.code, r.key) for r in rows}

    def is_member(self, class_id: int, key: str) -> bool:
        """Whether this key is in the class already (coming back costs no join from the limiter)."""
        with self.reading() as conn:
            return conn.execute(select(students.c.id).where(students.c.class_id == class_id,
                                                            students.c.key == key)).first() is not None

    def remove_student(self, class_id: int, student_id: int) -> bool:
        """Remove a student with their answers, votes and presence (the teacher's "remove"), and remember their
        id so that their session is told and cannot join again; False when they were not in the class."""
        with self.writing() as conn:
            key = conn.execute(students.delete().where(students.c.id == student_id, students.c.class_id == class_id)
                               .returning(students.c.key)).scalar()
            if key is None:
                return False
            conn.execute(dialect_insert(self.engine, removed).values(class_id=class_id, key=key, removed_at=utc_now())
                         .on_conflict_do_nothing(index_elements=["class_id", "key"]))
            # the foreign keys cascade too; said here so that a database made without them is cleaned alike
            for table in (answers, votes, presence):
                conn.execute(table.delete().where(table.c.class_id == class_id, table.c.student_id == student_id))
        return True

    def was_removed(self, class_id: int, key: str) -> bool:
        """Whether the teacher removed this key from the class (its session says so)."""
        with self.reading() as conn:
            return conn.execute(select(removed.c.key).where(removed.c.class_id == class_id,
                                                            removed.c.key == key)).first() is not None

    def removed_keys(self, class_id: int) -> frozenset[str]:
        """Every key the teacher removed from the class (one read, shared by a process's following students)."""
        with self.reading() as conn:
            return frozenset(conn.execute(select(removed.c.key).where(removed.c.class_id == class_id)).scalars())

    def turnout(self, class_id: int) -> Turnout:
        """How many students joined, and how many voted in the round open now (None when no vote is open)."""
        with self.reading() as conn:
            joined = conn.execute(select(func.count()).select_from(students)
                                  .where(students.c.class_id == class_id)).scalar_one()
            open_vote = conn.execute(select(live.c.vote_key, live.c.vote_round).where(
                live.c.class_id == class_id, live.c.vote_phase == "open")).first()
            voted = None if open_vote is None or open_vote.vote_key is None else conn.execute(
                select(func.count()).select_from(votes).where(
                    votes.c.class_id == class_id, votes.c.vote_key == open_vote.vote_key,
                    votes.c.round == open_vote.vote_round)).scalar_one()
        return Turnout(int(joined), voted)
