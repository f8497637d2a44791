// The number of the user's entities, merged or not: the upper bound
// reach_hops_* needs to be exhaustive.
MATCH (e:Entity {user_id: $userId})
RETURN count(e) AS total
