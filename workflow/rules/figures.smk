# Figures of the bound experiments, drawn only from the tables.


rule plot_bounds_vs_n:
    input:
        table="results/bounds/bounds_vs_n.csv",
    output:
        png=report(
            "results/figures/bounds_vs_n.png",
            caption="../report/bounds_vs_n.rst",
            category="Bounds",
        ),
        pdf="results/figures/bounds_vs_n.pdf",
    log:
        "logs/plot_bounds_vs_n.log",
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
        table="results/gdp_validity/gdp_validity.csv",
    output:
        png=report(
            "results/figures/gdp_validity.png",
            caption="../report/gdp_validity.rst",
            category="Bounds",
        ),
        pdf="results/figures/gdp_validity.pdf",
    log:
        "logs/plot_gdp_validity.log",
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
        table="results/personalized/personalized.csv",
    output:
        png=report(
            "results/figures/personalized.png",
            caption="../report/personalized.rst",
            category="Bounds",
        ),
        pdf="results/figures/personalized.pdf",
    log:
        "logs/plot_personalized.log",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_personalized.py"


rule plot_runtime:
    input:
        table="results/runtime/runtime.csv",
    output:
        png=report(
            "results/figures/runtime.png",
            caption="../report/runtime.rst",
            category="Runtime",
        ),
        pdf="results/figures/runtime.pdf",
    log:
        "logs/plot_runtime.log",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_runtime.py"


rule dump_config:
    output:
        config=report(
            "results/config_used.yaml",
            caption="../report/config.rst",
            category="Configuration",
        ),
    log:
        "logs/dump_config.log",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    params:
        config=config,
    script:
        "../scripts/dump_config.py"


rule gallery:
    """Copy the main figures into docs/figures for the README (run after `all`)."""
    input:
        expand(
            "results/figures/{name}.png",
            name=[
                "bounds_vs_n",
                "gdp_validity",
                "personalized",
                "mean_estimation",
                "frequency_estimation",
                "sgd",
                "runtime",
            ],
        ),
    output:
        expand(
            "docs/figures/{name}.png",
            name=[
                "bounds_vs_n",
                "gdp_validity",
                "personalized",
                "mean_estimation",
                "frequency_estimation",
                "sgd",
                "runtime",
            ],
        ),
    log:
        "logs/gallery.log",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=2,
    shell:
        "mkdir -p docs/figures && for f in {input}; do cp $f docs/figures/; done 2> {log}"
