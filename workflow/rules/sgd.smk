# Experiment 6 (sgd): shuffled PLDP-SGD accuracy vs central eps, per accounting method.


SGD_RESOURCES = dict(
    mem_mb=lambda wc: 2000 if config["sgd"]["dataset"] == "digits" else 12000,
    runtime=lambda wc: 30 if config["sgd"]["dataset"] == "digits" else 600,
)


# Per-job tables: one job per randomizer x budget profile x model x accounting method (the
# local-only reference included), each calibrating and training every target eps; plus one
# non-private run per model.  clones_tiers (per-tier targets) is clones itself on the
# identical profile (one tier), so it has no job there.
SGD_RUNS = [
    results_path(f"sgd/runs/{r}/{p}/{mdl}/{m}.csv")
    for r in config["sgd"]["randomizers"]
    for p in config["sgd"]["profiles"]
    for mdl in config["sgd"]["models"]
    for m in list(config["sgd"]["methods"])
    + [x for x in config["sgd"]["references"] if x != "nonprivate"]
    if not (m == "clones_tiers" and p == "identical")
] + (
    [results_path(f"sgd/runs/nonprivate/{mdl}.csv") for mdl in config["sgd"]["models"]]
    if "nonprivate" in config["sgd"]["references"]
    else []
)


rule train_sgd:
    input:
        unpack(sgd_data_input),
    output:
        table=results_path("sgd/runs/{randomizer}/{profile}/{model}/{method}.csv"),
    log:
        log_path("train_sgd/{randomizer}/{profile}/{model}/{method}.log"),
    benchmark:
        benchmark_path("train_sgd/{randomizer}/{profile}/{model}/{method}.tsv")
    wildcard_constraints:
        randomizer="[a-z][a-z_]*",
        profile="[^/]+",
        model="[a-z]+",
        method="[a-z][a-z0-9_]*",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        **SGD_RESOURCES,
    params:
        method=lambda wc: wc.method,
        target_eps=config["sgd"]["target_eps"],
        job=lambda wc: {
            "randomizer": wc.randomizer,
            "profile": wc.profile,
            "model": wc.model,
        },
        sgd=config["sgd"],
        profiles=profile_specs(
            [p for p in config["sgd"]["profiles"] if p != "identical"]
        ),
        seed=config["seed"],
        threads=1,
    script:
        "../scripts/train_sgd.py"


# The non-private reference (clipped SGD without noise) depends on the model only.
rule train_sgd_nonprivate:
    input:
        unpack(sgd_data_input),
    output:
        table=results_path("sgd/runs/nonprivate/{model}.csv"),
    log:
        log_path("train_sgd/nonprivate/{model}.log"),
    benchmark:
        benchmark_path("train_sgd/nonprivate/{model}.tsv")
    wildcard_constraints:
        model="[a-z]+",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        **SGD_RESOURCES,
    params:
        method="nonprivate",
        target_eps=[None],
        job=lambda wc: {
            "randomizer": config["sgd"]["randomizers"][0],
            "profile": "identical",
            "model": wc.model,
        },
        sgd=config["sgd"],
        profiles={},
        seed=config["seed"],
        threads=1,
    script:
        "../scripts/train_sgd.py"


rule collect_sgd:
    input:
        tables=SGD_RUNS,
    output:
        table=report(
            results_path("sgd/sgd.csv"),
            caption="../report/table_sgd.rst",
            category="3 Tables",
            subcategory="SGD",
        ),
    log:
        log_path("collect_sgd.log"),
    benchmark:
        benchmark_path("collect_sgd.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="sgd",
        expect=piece_grids("sgd"),
    script:
        "../scripts/concat_tables.py"


rule plot_sgd:
    input:
        table=results_path("sgd/sgd.csv"),
        # the configuration that produced the figure (redrawn when it changes)
        config=config_path("sgd"),
    output:
        png=report(
            results_path("figures/sgd.png"),
            caption="../report/sgd.rst",
            category="1 Main figures",
            subcategory="SGD",
        ),
        pdf=results_path("figures/sgd.pdf"),
        budgets_png=report(
            results_path("figures/sgd_budgets.png"),
            caption="../report/sgd_budgets.rst",
            category="1 Main figures",
            subcategory="SGD",
        ),
        budgets_pdf=results_path("figures/sgd_budgets.pdf"),
    log:
        log_path("plot_sgd.log"),
    benchmark:
        benchmark_path("plot_sgd.tsv")
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_sgd.py"


rule sgd:
    input:
        experiment_outputs("sgd"),
    localrule: True
