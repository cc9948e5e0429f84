class Role
  def traefik_labels
    {
      "traefik.http.routers.#{service}.rule" => "PathPrefix(`/`)",
      "traefik.http.middlewares.#{service}-retry.retry.attempts" => "5",
      "traefik.http.routers.#{service}.tls" => "true"
    }
  end
end
