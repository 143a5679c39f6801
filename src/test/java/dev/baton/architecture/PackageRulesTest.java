package dev.baton.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The package rules of docs/internals/code-map.md: dependencies point one way, api -> lock -> redis, with
 * config beside all of them and security on its own. Fails on the first import that breaks them.
 */
@AnalyzeClasses(packages = "dev.baton", importOptions = ImportOption.DoNotIncludeTests.class)
class PackageRulesTest {

    @ArchTest
    static final ArchRule layers_point_one_way = layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("api").definedBy("dev.baton.api..")
            .layer("ops").definedBy("dev.baton.ops..")
            .layer("security").definedBy("dev.baton.security..")
            .layer("lock").definedBy("dev.baton.lock..")
            .layer("redis").definedBy("dev.baton.redis..")
            .layer("config").definedBy("dev.baton.config..")
            .whereLayer("api").mayNotBeAccessedByAnyLayer()
            .whereLayer("ops").mayNotBeAccessedByAnyLayer()
            .whereLayer("security").mayOnlyBeAccessedByLayers("api")
            .whereLayer("lock").mayOnlyBeAccessedByLayers("api", "ops")
            .whereLayer("redis").mayOnlyBeAccessedByLayers("lock", "api", "ops")
            .whereLayer("config").mayOnlyBeAccessedByLayers("api", "ops", "security", "lock", "redis");

    @ArchTest
    static final ArchRule no_package_cycles = slices().matching("dev.baton.(*)..").should().beFreeOfCycles();

    @ArchTest
    static final ArchRule security_knows_nothing_of_the_protocol = noClasses().that()
            .resideInAPackage("dev.baton.security..").should()
            .dependOnClassesThat().resideInAnyPackage("dev.baton.lock..", "dev.baton.redis..");

    @ArchTest
    static final ArchRule only_redis_talks_to_redis = noClasses().that().resideOutsideOfPackage("dev.baton.redis..")
            .should().dependOnClassesThat().resideInAnyPackage("io.vertx.redis..", "io.vertx.mutiny.redis..",
                    "io.quarkus.redis..");

    @ArchTest
    static final ArchRule http_belongs_to_api = noClasses().that().resideInAnyPackage("dev.baton.lock..",
            "dev.baton.redis..", "dev.baton.config..").should().dependOnClassesThat()
            .resideInAnyPackage("jakarta.ws.rs..", "org.jboss.resteasy..", "io.vertx.ext.web..");
}
