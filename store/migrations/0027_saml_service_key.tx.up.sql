-- This service's SAML key pair: it signs the AuthnRequests sent to identity
-- providers, and identity providers may encrypt their assertions to its
-- certificate (both are published in every provider's service metadata).
-- One per instance (a single row), made on first use.
CREATE TABLE saml_service_keys (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    private_key bytea NOT NULL, -- PKCS #8, DER
    certificate bytea NOT NULL, -- X.509, DER
    created_at  timestamptz NOT NULL
);
