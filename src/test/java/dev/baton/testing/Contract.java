package dev.baton.testing;

import java.net.http.HttpResponse;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;

/**
 * Every response a test receives is checked against the top-level {@code openapi.yaml}.
 * Requests are not: tests send invalid requests on purpose.
 */
public final class Contract {

    public static final OpenApiInteractionValidator VALIDATOR = OpenApiInteractionValidator
            .createForSpecificationUrl("openapi.yaml")
            .withLevelResolver(LevelResolver.create()
                    .withLevel("validation.request", ValidationReport.Level.IGNORE)
                    .build())
            .build();

    public static final OpenApiValidationFilter FILTER = new OpenApiValidationFilter(VALIDATOR);

    private Contract() {
    }

    /** For responses received outside RestAssured (the concurrency test's HttpClient). */
    public static void check(String method, String path, HttpResponse<String> response) {
        SimpleResponse.Builder builder = SimpleResponse.Builder.status(response.statusCode())
                .withBody(response.body());
        response.headers().map().forEach((name, values) -> builder.withHeader(name, values));
        ValidationReport report = VALIDATOR.validateResponse(path, Request.Method.valueOf(method), builder.build());
        if (report.hasErrors()) {
            throw new AssertionError("response of " + method + " " + path + " breaks openapi.yaml: "
                    + report.getMessages() + "\n" + response.body());
        }
    }
}
