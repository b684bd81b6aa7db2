# Experiments 1 (bounds_vs_n), 2 (personalized), 3 (gdp_validity), 7 (runtime) and 8
# (personalized_validity): tables.


rule compute_bounds_vs_n:
    output:
        table=results_path("bounds/bounds_vs_n/eps0_{eps0}.csv"),
    log:
        log_path("compute_bounds_vs_n/eps0_{eps0}.log"),
    benchmark:
        benchmark_path("compute_bounds_vs_n/eps0_{eps0}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        n=config["bounds_vs_n"]["n"],
        eps0=lambda wc: float(wc.eps0),
        delta=config["bounds_vs_n"]["delta"],
        methods=bound_methods(),
    script:
        "../scripts/compute_bounds_vs_n.py"


rule collect_bounds_vs_n:
    input:
        tables=expand(
            results_path("bounds/bounds_vs_n/eps0_{eps0}.csv"),
            eps0=[fmt_num(e) for e in config["bounds_vs_n"]["eps0"]],
        ),
    output:
        table=report(
            results_path("bounds/bounds_vs_n.csv"),
            caption="../report/table_bounds_vs_n.rst",
            category="3 Tables",
            subcategory="Identical budgets: eps vs n",
        ),
    log:
        log_path("collect_bounds_vs_n.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="bounds_vs_n",
    script:
        "../scripts/concat_tables.py"


rule compute_gdp_validity:
    output:
        table=results_path("gdp_validity/n_{n}.csv"),
    log:
        log_path("compute_gdp_validity/n_{n}.log"),
    benchmark:
        benchmark_path("compute_gdp_validity/n_{n}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        n=lambda wc: [int(wc.n)],
        eps0=config["gdp_validity"]["eps0"],
        delta=config["gdp_validity"]["delta"],
    script:
        "../scripts/compute_gdp_validity.py"


rule collect_gdp_validity:
    input:
        tables=expand(
            results_path("gdp_validity/n_{n}.csv"), n=config["gdp_validity"]["n"]
        ),
    output:
        table=report(
            results_path("gdp_validity/gdp_validity.csv"),
            caption="../report/table_gdp_validity.rst",
            category="3 Tables",
            subcategory="Validity of the paper's formula",
        ),
    log:
        log_path("collect_gdp_validity.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="gdp_validity",
    script:
        "../scripts/concat_tables.py"


rule compute_personalized:
    output:
        table=results_path("personalized/{profile}.csv"),
    log:
        log_path("compute_personalized/{profile}.log"),
    benchmark:
        benchmark_path("compute_personalized/{profile}.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        profiles=lambda wc: [wc.profile],
        profile_specs=lambda wc: profile_specs([wc.profile]),
        n=config["personalized"]["n"],
        delta=config["personalized"]["delta"],
        delta0=config["personalized"]["delta0"],
        methods=bound_methods(),
        seed=config["seed"],
    script:
        "../scripts/compute_personalized.py"


rule collect_personalized:
    input:
        tables=expand(
            results_path("personalized/{profile}.csv"),
            profile=config["personalized"]["profiles"],
        ),
    output:
        table=report(
            results_path("personalized/personalized.csv"),
            caption="../report/table_personalized.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
    log:
        log_path("collect_personalized.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="personalized",
    script:
        "../scripts/concat_tables.py"


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
    script:
        "../scripts/concat_tables.py"


rule make_tables:
    input:
        table=results_path("personalized/personalized.csv"),
    output:
        latex=report(
            results_path("tables/personalized.tex"),
            caption="../report/table_personalized_paper.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
        markdown=report(
            results_path("tables/personalized.md"),
            caption="../report/table_personalized_paper.rst",
            category="3 Tables",
            subcategory="Personalized budgets",
        ),
    log:
        log_path("make_tables.log"),
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        table_n=config["personalized"]["table_n"],
    script:
        "../scripts/make_tables.py"


rule time_bounds:
    output:
        table=report(
            results_path("runtime/runtime.csv"),
            caption="../report/table_runtime.rst",
            category="3 Tables",
            subcategory="Runtime",
        ),
    log:
        log_path("time_bounds.log"),
    benchmark:
        benchmark_path("time_bounds.tsv")
    conda:
        "../envs/shuffledp.yaml"
    # Two threads (capped at --cores): on a 2-core machine the timings run with no other job
    # competing; the bounds themselves are single-threaded.
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        n=config["runtime"]["n"],
        profile=config["runtime"]["profile"],
        profile_spec=lambda wc: config["profiles"][config["runtime"]["profile"]],
        delta=config["runtime"]["delta"],
        repeats=config["runtime"]["repeats"],
        methods=bound_methods(),
        seed=config["seed"],
    script:
        "../scripts/time_bounds.py"
