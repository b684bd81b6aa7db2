# Experiment 8 (personalized_validity): every bound against the certified lower bound of the
# randomizer the users run; one table per randomizer, one tidy table, two figures.


rule compute_personalized_validity:
    output:
        table=results_path("personalized_validity/{randomizer}.csv"),
    log:
        log_path("compute_personalized_validity/{randomizer}.log"),
    benchmark:
        benchmark_path("compute_personalized_validity/{randomizer}.tsv")
    wildcard_constraints:
        randomizer="[a-z_]+(-[0-9]+)?",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        profiles=config["personalized_validity"]["profiles"],
        profile_specs=profile_specs(config["personalized_validity"]["profiles"]),
        randomizers=lambda wc: [validity_tags()[wc.randomizer]],
        n=config["personalized_validity"]["n"],
        delta=config["personalized_validity"]["delta"],
        gaussian_delta0=config["personalized_validity"]["gaussian_delta0"],
        methods=bound_methods(),
        seed=config["seed"],
    script:
        "../scripts/compute_personalized_validity.py"


rule collect_personalized_validity:
    input:
        tables=expand(
            results_path("personalized_validity/{randomizer}.csv"),
            randomizer=list(validity_tags()),
        ),
    output:
        table=report(
            results_path("personalized_validity/personalized_validity.csv"),
            caption="../report/table_personalized_validity.rst",
            category="3 Tables",
            subcategory="Personalized validity",
        ),
    log:
        log_path("collect_personalized_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="personalized_validity",
        expect=piece_grids("personalized_validity"),
    script:
        "../scripts/concat_tables.py"


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


rule personalized_validity:
    input:
        experiment_outputs("personalized_validity"),
    localrule: True
