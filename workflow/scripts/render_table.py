"""A tidy table as one self-contained HTML page, for viewing in the Snakemake report (which
shows HTML results in place but offers CSV, Markdown and LaTeX files only as downloads).

The page holds every row and column of the validated table (:func:`wfutils.read_table`),
numbers to 6 significant digits, rows that are not ``ok`` greyed, a sticky header, and the
path of the CSV file it renders.

Snakemake interface (rule ``render_table``): input ``table``; output ``html``; params ``kind``
(the table kind of :mod:`table_schemas`).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, read_table, run_main, write_text

_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 13px; margin: 12px; }
table { border-collapse: collapse; }
th, td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right;
         white-space: nowrap; }
th { position: sticky; top: 0; background: #f2f2f2; }
td.text { text-align: left; white-space: normal; max-width: 40em; }
tr.na td { color: #888; }
"""


def render(df, *, title: str, source: str) -> str:
    import html

    import pandas as pd

    def cell(v):
        if not isinstance(v, str) and pd.isna(v):
            return "<td></td>"
        if isinstance(v, float):
            return f"<td>{v:.6g}</td>"
        text = html.escape(str(v))
        return f'<td class="text">{text}</td>' if len(text) > 24 else f"<td>{text}</td>"

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    status = list(df["status"]) if "status" in df else ["ok"] * len(df)
    for st, (_, r) in zip(status, df.iterrows(), strict=True):
        cls = "" if st == "ok" else ' class="na"'
        rows.append(f"<tr{cls}>" + "".join(cell(v) for v in r.tolist()) + "</tr>")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}</style></head><body><h3>{html.escape(title)}</h3>"
            f"<p>{len(df)} rows from <code>{html.escape(source)}</code>; rows that are not "
            f"<code>ok</code> are grey, with their reason.</p><table><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></body></html>\n")


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    kind = params["kind"]
    df = read_table(inputs["table"], kind)
    write_text(render(df, title=f"Table {kind}", source=str(inputs["table"])), outputs["html"])
    logger.info("rendered %d rows of %s", len(df), inputs["table"])


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
