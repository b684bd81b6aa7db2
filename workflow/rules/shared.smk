# Rules shared by every experiment: the configuration it used (dump_config), its table as HTML
# for the report (render_table), the report's landing page (report_landing) and the README
# gallery (gallery).  Their lists come from the manifest (common.smk: EXPERIMENTS,
# TABLE_FILES, LANDING, GALLERY).


rule dump_config:
    """The effective configuration an experiment reads (files, --config overrides, schema
    defaults), written into its results folder.  Its params are that configuration, so
    Snakemake's params trigger rewrites it whenever it changes, e.g. when one target is rerun
    with --config overrides; every target (the rule named after the experiment) and every
    figure depends on it.
    """
    output:
        config=report(
            config_path("{experiment}"),
            caption="../report/config.rst",
            category="4 Configuration",
        ),
    log:
        log_path("dump_config/{experiment}.log"),
    wildcard_constraints:
        experiment="|".join(EXPERIMENTS),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    params:
        config=lambda wc: experiment_config(wc.experiment),
    script:
        "../scripts/dump_config.py"


rule render_table:
    """An experiment's tidy table as an HTML page the report shows in place."""
    input:
        table=lambda wc: results_path(TABLE_FILES[wc.kind]),
    output:
        html=report(
            results_path("tables/{kind}.html"),
            caption="../report/table_html.rst",
            category="3 Tables",
            subcategory="HTML views",
            labels={"table": "{kind}"},
        ),
    log:
        log_path("render_table/{kind}.log"),
    wildcard_constraints:
        kind="|".join(TABLE_FILES),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind=lambda wc: wc.kind,
    script:
        "../scripts/render_table.py"


# The report's landing page: every main figure with its caption (category "1 Main figures"),
# included by workflow/report/workflow.rst, the page `snakemake --report` opens on.
rule report_landing:
    input:
        figures=[results_path(f"figures/{name}.png") for name, _ in LANDING],
        captions=[f"workflow/report/{name}.rst" for name, _ in LANDING],
        configs=[config_path(name) for name, _ in LANDING],
    output:
        landing=report(
            results_path("report/landing.rst"),
            caption="../report/landing.rst",
            category="4 Configuration",
            subcategory="Report",
        ),
    log:
        log_path("report_landing.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        titles=[title for _, title in LANDING],
        configs=[config_path(name) for name, _ in LANDING],
        config=lambda wc: {k: v for k, v in config.items()},
    script:
        "../scripts/report_landing.py"


rule gallery:
    """Copy this configuration's main figures into docs/figures for the README (run after
    `all`, e.g. `snakemake --cores 1 gallery --configfile config/paper.yaml`).  Refuses the
    CI configuration (run: test), whose tiny grids must never reach the README."""
    input:
        gallery_figures,
    output:
        expand("docs/figures/{name}.png", name=GALLERY),
    log:
        log_path("gallery.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    shell:
        "mkdir -p docs/figures && for f in {input}; do cp $f docs/figures/; done 2> {log}"


# The fast target `snakemake --cores all bounds`: the identical-budget bound experiments
# (wfmanifest.BOUND_EXPERIMENTS: figures 1 and 2), no simulation or training.
rule bounds:
    input:
        [p for name in wfmanifest.BOUND_EXPERIMENTS for p in experiment_outputs(name)],
    localrule: True
