class Role
  def traefik_labels
    {
      "traefik.http.routers.#{service}.rule" => "PathPrefix(`/`)",
      "traefik.http.middlewares.#{service}-retry.retry.attempts" => "5",
      # ruleid: infra/traefik-retry-middleware-attached
      "traefik.http.routers.#{service}.middlewares" => "#{service}-retry@docker",
      # ok: infra/traefik-retry-middleware-attached
      "traefik.http.routers.#{service}-admin.middlewares" => "#{service}-auth@docker",
      "traefik.http.routers.#{service}.tls" => "true"
    }
  end
end
