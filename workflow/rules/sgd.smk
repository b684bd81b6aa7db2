# Experiment 6 (sgd): shuffled PLDP-SGD accuracy vs central eps, per accounting method.


# Per-run tables: each accounting method (and the local-only reference) x target eps, plus
# the non-private run.
SGD_RUNS = [
    results_path(f"sgd/runs/{m}/eps_{fmt_num(e)}.csv")
    for m in list(config["sgd"]["methods"])
    + [r for r in config["sgd"]["references"] if r != "nonprivate"]
    for e in config["sgd"]["target_eps"]
] + (
    [results_path("sgd/runs/nonprivate/eps_inf.csv")]
    if "nonprivate" in config["sgd"]["references"]
    else []
)


rule train_sgd:
    input:
        # the user's MNIST file or directory (checked to exist); nothing for digits
        unpack(
            lambda wc: (
                {"mnist": config["sgd"]["mnist_path"]}
                if config["sgd"]["dataset"] == "mnist"
                else {}
            )
        ),
    output:
        table=results_path("sgd/runs/{method}/eps_{eps}.csv"),
    log:
        log_path("train_sgd/{method}/eps_{eps}.log"),
    benchmark:
        benchmark_path("train_sgd/{method}/eps_{eps}.tsv")
    wildcard_constraints:
        method="[a-z][a-z0-9_]*",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: 2000 if config["sgd"]["dataset"] == "digits" else 12000,
        runtime=lambda wc: 30 if config["sgd"]["dataset"] == "digits" else 600,
    params:
        method=lambda wc: wc.method,
        target_eps=lambda wc: None if wc.eps == "inf" else float(wc.eps),
        sgd=config["sgd"],
        profiles=profile_specs(
            []
            if config["sgd"]["profile"] == "identical"
            else [config["sgd"]["profile"]]
        ),
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
