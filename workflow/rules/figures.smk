# Figures of the bound experiments, drawn only from the tables.


rule plot_bounds_vs_n:
    input:
        table=results_path("bounds/bounds_vs_n.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("bounds_vs_n"),
    output:
        png=report(
            results_path("figures/bounds_vs_n.png"),
            caption="../report/bounds_vs_n.rst",
            category="1 Main figures",
            subcategory="Identical budgets: eps vs n",
        ),
        pdf=results_path("figures/bounds_vs_n.pdf"),
        all_png=report(
            results_path("figures/bounds_vs_n_all.png"),
            caption="../report/bounds_vs_n_all.rst",
            category="2 Appendix figures",
            subcategory="Identical budgets: eps vs n",
        ),
        all_pdf=results_path("figures/bounds_vs_n_all.pdf"),
    log:
        log_path("plot_bounds_vs_n.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_bounds_vs_n.py"


rule plot_gdp_validity:
    input:
        table=results_path("gdp_validity/gdp_validity.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("gdp_validity"),
    output:
        png=report(
            results_path("figures/gdp_validity.png"),
            caption="../report/gdp_validity.rst",
            category="1 Main figures",
            subcategory="Validity of the paper's formula",
        ),
        pdf=results_path("figures/gdp_validity.pdf"),
    log:
        log_path("plot_gdp_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_gdp_validity.py"


rule plot_personalized:
    input:
        table=results_path("personalized/personalized.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("personalized"),
    output:
        png=report(
            results_path("figures/personalized.png"),
            caption="../report/personalized.rst",
            category="1 Main figures",
            subcategory="Personalized budgets",
        ),
        pdf=results_path("figures/personalized.pdf"),
        all_png=report(
            results_path("figures/personalized_all.png"),
            caption="../report/personalized_all.rst",
            category="2 Appendix figures",
            subcategory="Personalized budgets",
        ),
        all_pdf=results_path("figures/personalized_all.pdf"),
    log:
        log_path("plot_personalized.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        main_profiles=config["personalized"]["main_profiles"],
    script:
        "../scripts/plot_personalized.py"


rule plot_personalized_validity:
    input:
        table=results_path("personalized_validity/personalized_validity.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("personalized_validity"),
    output:
        png=report(
            results_path("figures/personalized_validity.png"),
            caption="../report/personalized_validity.rst",
            category="1 Main figures",
            subcategory="Personalized validity",
        ),
        pdf=results_path("figures/personalized_validity.pdf"),
        all_png=report(
            results_path("figures/personalized_validity_all.png"),
            caption="../report/personalized_validity_all.rst",
            category="2 Appendix figures",
            subcategory="Personalized validity",
        ),
        all_pdf=results_path("figures/personalized_validity_all.pdf"),
    log:
        log_path("plot_personalized_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        main_randomizers=config["personalized_validity"]["main_randomizers"],
    script:
        "../scripts/plot_personalized_validity.py"


rule plot_runtime:
    input:
        table=results_path("runtime/runtime.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("runtime"),
    output:
        png=report(
            results_path("figures/runtime.png"),
            caption="../report/runtime.rst",
            category="1 Main figures",
            subcategory="Runtime",
        ),
        pdf=results_path("figures/runtime.pdf"),
    log:
        log_path("plot_runtime.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_runtime.py"


rule dump_config:
    """The effective configuration an experiment reads (files, --config overrides, schema
    defaults), written into its results folder.  Its params are that configuration, so
    Snakemake's params trigger rewrites it whenever it changes, e.g. when one target is rerun
    with --config overrides; every target (targets.smk) and every figure depends on it.
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


# The report's landing page: every main figure with its caption (category "1 Main figures"),
# included by workflow/report/workflow.rst, the page `snakemake --report` opens on.
LANDING = [
    ("bounds_vs_n", "Identical budgets: eps vs n"),
    ("gdp_validity", "Validity of the paper's formula"),
    ("personalized", "Personalized budgets"),
    ("personalized_validity", "Personalized validity: every bound vs a certified lower bound"),
    ("mean_estimation", "Mean estimation"),
    ("frequency_estimation", "Frequency estimation"),
    ("sgd", "SGD"),
    ("runtime", "Runtime"),
]


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
