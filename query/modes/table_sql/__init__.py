"""The table-sql mode (after SRAG): an entity set or a retrieved table → a table built for the question →
SQL. ``mode`` is the mode; ``set_planner`` and ``set_answers`` its graph path; ``retrieved`` and ``rows``
its retrieved-table path; ``settings`` its bounds."""

from query.modes.table_sql.mode import TableSqlMode
from query.modes.table_sql.retrieved import pick_table
from query.modes.table_sql.rows import pick_note
from query.modes.table_sql.settings import NAME, TableSqlSettings

__all__ = ["NAME", "TableSqlMode", "TableSqlSettings", "pick_note", "pick_table"]
