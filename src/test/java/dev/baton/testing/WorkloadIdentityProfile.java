package dev.baton.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * API keys (AuthEnabledProfile's) and workload tokens side by side. The JWKS URL comes from
 * JwksServerResource; the rules cover both ways a rule matches.
 */
public class WorkloadIdentityProfile extends AuthEnabledProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = new HashMap<>(super.getConfigOverrides());
        config.put("baton.auth.jwt.enabled", "true");
        config.put("baton.auth.jwt.issuer", TestIssuer.ISSUER);
        config.put("baton.auth.jwt.rules", String.join(",",
                "orders/payment-svc=orders:worker",
                "orders/baton-operator=orders:admin",
                "billing/*=billing:worker",
                "claim:azp:team-a-ci=team-a:worker",
                "claim:groups:ops-oncall=team-b:admin"));
        return config;
    }
}
