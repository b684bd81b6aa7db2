"""The landing page of the Snakemake report: every main figure with its caption.

Snakemake's HTML report opens on the workflow description (``workflow/report/workflow.rst``).
That description includes the reStructuredText this script writes
(``results/<run>/report/landing.rst``): one section per main figure, in the order of the
report's category "1 Main figures", with the figure (a 150 dpi rendition embedded as a data
URI, so the report stays one self-contained file; the 300 dpi PNG and the PDF are the report's
results) and its caption (the same ``workflow/report/<figure>.rst`` the figure is registered
with, rendered with this run's configuration).

Snakemake interface (rule ``report_landing``): inputs ``figures`` (main PNGs) and ``captions``
(their rst files, same order); output ``landing``; params ``titles`` (one per figure),
``config`` (the effective configuration), ``configs`` (the config_used file of each figure).
"""

import sys

if "snakemake" in globals():
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821

from wfutils import get_logger, run_main, write_text

_FOOTER = "Produced with the configuration"


def caption_text(template: str, *, config: dict, config_file: str) -> str:
    """The caption rendered with the run's configuration, without the link paragraph to the
    report's configuration entry (a reference the landing page cannot resolve)."""
    from types import SimpleNamespace

    import jinja2

    text = jinja2.Template(template, undefined=jinja2.StrictUndefined).render(
        snakemake=SimpleNamespace(config=config, input=SimpleNamespace(config=config_file)))
    if _FOOTER in text:
        text = text[: text.index(_FOOTER)].rstrip()
    return text + f"\n\n(Configuration: ``{config_file}``.)"


#: Resolution of the figures embedded in the landing page (screen, not print).
LANDING_DPI = 150


def entry(title: str, png: str, caption: str) -> str:
    """One landing section in reStructuredText: a title, the figure as a data URI (the URI
    split over lines, which reStructuredText joins), then its caption."""
    import base64
    import io

    from PIL import Image

    with Image.open(png) as im:
        dpi = float(im.info.get("dpi", (300, 300))[0]) or 300.0
        scale = min(1.0, LANDING_DPI / dpi)
        small = im.convert("RGB").resize((max(1, round(im.width * scale)),
                                          max(1, round(im.height * scale))), Image.LANCZOS)
    buf = io.BytesIO()
    small.save(buf, format="PNG", optimize=True)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    lines = [data[i:i + 96] for i in range(0, len(data), 96)]
    uri = "data:image/png;base64," + lines[0] + "".join(f"\n   {x}" for x in lines[1:])
    rule = "-" * len(title)
    return f"{title}\n{rule}\n\n.. image:: {uri}\n   :width: 100%\n\n{caption}\n"


def main(*, inputs, outputs, params, log=None):
    logger = get_logger(log)
    figures, captions = list(inputs["figures"]), list(inputs["captions"])
    titles, configs = list(params["titles"]), list(params["configs"])
    if not (len(figures) == len(captions) == len(titles) == len(configs)):
        raise ValueError(f"figures, captions, titles and configs differ in length: "
                         f"{len(figures)}, {len(captions)}, {len(titles)}, {len(configs)}")
    sections = []
    for k, (png, rst, title, cfg) in enumerate(zip(figures, captions, titles, configs,
                                                   strict=True), 1):
        with open(rst) as fh:
            text = caption_text(fh.read(), config=params["config"], config_file=cfg)
        sections.append(entry(f"{k}. {title}", png, text))
    write_text("\n\n".join(sections), outputs["landing"])
    logger.info("landing page with %d main figures", len(sections))


if "snakemake" in globals():
    run_main(main, snakemake)  # noqa: F821
