-- The SAML service's private key is sealed under the server key
-- (DOCSAPI_SECRET_KEY) when the server has one; sealed says which.
ALTER TABLE saml_service_keys ADD COLUMN sealed boolean NOT NULL DEFAULT false;
